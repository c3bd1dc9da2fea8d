/** Starts one emulator on its own HTTP server: what `npm run emulator`, the embedded mode and the tests run. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Engine } from './engine.js';
import type { Fault } from './faults.js';
import type { DeliveryRecord } from './dispatcher.js';
import { resolveOptions, type EmulatorOptions, type FaultSpec } from './options.js';
import { DEMO_API_KEY } from './seed.js';
import { EmulatorApp, type StatsSnapshot } from './server.js';

export interface RunningEmulator {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** The address bound, as the system reports it (`127.0.0.1`, `0.0.0.0`, `::`). */
  readonly boundAddress: string;
  readonly options: Readonly<EmulatorOptions>;
  /** Closes every socket and clears every timer. */
  stop(): Promise<void>;
  /** Requests per `METHOD /v1/route/:pattern`, as `GET /_emulator/stats`. */
  stats(): StatsSnapshot;
  resetStats(): void;
  /** Forgets every account, object, counter and fault. */
  reset(): void;
  /** Demo customers, transactions and payouts for the key (default `sk_sandbox_demo`); returns the key. */
  seedDemo(apiKey?: string): string;
  addFault(spec: FaultSpec): Fault;
  clearFaults(): void;
  deliveries(): readonly DeliveryRecord[];
  /** Delivers every account's events to `url` signed with `secret` from now on (what EMULATOR_FORWARD_TO sets at start). */
  forwardEventsTo(url: string, secret: string): void;
}

export async function startEmulator(partial: Partial<EmulatorOptions> = {}): Promise<RunningEmulator> {
  const options = resolveOptions(partial);
  const engine = new Engine(options);
  const app = new EmulatorApp(engine);
  const server = http.createServer({ keepAlive: true }, app.handle);
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const { port, address: boundAddress } = server.address() as AddressInfo;
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  engine.baseUrl = url;
  if (options.seed) app.seedDemo(DEMO_API_KEY);
  options.logger?.info({ url, style: options.responseStyle, listParams: options.listParams }, 'payments emulator listening');
  if (options.liveRehearsal) options.logger?.warn({ url }, 'LIVE REHEARSAL: sk_live_ keys are accepted; this is the emulator, not the payments provider, and no money moves');

  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    boundAddress,
    options,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        app.close();
        engine.close();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
    stats: () => app.stats(),
    resetStats: () => app.resetStats(),
    reset: () => app.reset(),
    seedDemo: (apiKey?: string) => app.seedDemo(apiKey),
    addFault: (spec) => app.addFault(spec),
    clearFaults: () => app.faults.clear(),
    deliveries: () => engine.dispatcher.deliveries(),
    forwardEventsTo: (url: string, secret: string) => engine.forwardEventsTo({ url, secret }),
  };
}
