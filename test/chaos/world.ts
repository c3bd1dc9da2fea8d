/**
 * The processes a chaos run stands on: the emulator behind a proxy that drops `Idempotency-Key` (every write that
 * reaches it acts), and either two gateway processes sharing a redis-server with its append-only file through a TCP
 * proxy that can stop forwarding, or one gateway without Redis on a data folder. Each fault is a method here.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { startKeyStrippingUpstream, type KeyStrippingUpstream } from '../support/key-stripping-upstream.js';
import { gatewayReady, spawnMain, type GatewayProcess } from '../realtime/processes.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../realtime/tcp-proxy.js';

export const WEBHOOK_SECRET = 'whsec_chaos_suite_signing_secret';

export interface Gateway {
  name: string;
  port: number;
  url: string;
  wsUrl: string;
  process: GatewayProcess;
}

export interface WorldOptions {
  /** Two gateways over Redis, or one alone on a data folder. */
  shape: 'redis' | 'single';
  quarantineMs: number;
  /** Settings the run's size needs (subscriptions per key). */
  env?: Record<string, string>;
}

export interface World {
  shape: WorldOptions['shape'];
  emulator: RunningEmulator;
  gateways(): Gateway[];
  gateway(name: string): Gateway;
  /** Called with each write's body as it reaches the upstream, before it acts (one hook at a time). */
  onWrite(hook: ((body: string) => Promise<void> | void) | null): void;
  /** SIGKILL: no drain, no goodbye. */
  kill(name: string): Promise<void>;
  /** Starts it again with the same settings (and data folder): a new port. */
  restart(name: string): Promise<Gateway>;
  redis(): RedisFaults;
  stop(): Promise<void>;
}

export interface RedisFaults {
  kill(): Promise<void>;
  /** Back on its port from its append-only file. */
  restartFromFile(): Promise<void>;
  /** Back on its port with nothing: a new container without its volume. */
  restartEmpty(): Promise<void>;
  cutOff(): void;
  reconnect(): void;
}

export async function startWorld(options: WorldOptions): Promise<World> {
  let hook: ((body: string) => Promise<void> | void) | null = null;
  const emulator = await startEmulator({ port: 0, settleMs: 50 });
  const stripping: KeyStrippingUpstream = await startKeyStrippingUpstream(emulator.url, {
    beforeWrite: (_method, _path, body) => hook?.(body),
  });
  const folders: string[] = [];
  const folder = (label: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), `chaos-${label}-`));
    folders.push(dir);
    return dir;
  };

  let redis: RedisServer | undefined;
  let proxy: TcpProxy | undefined;
  let redisDir = '';
  const redisArgs = () => ['--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', redisDir];
  // Reconciliation off: what a subscriber sees comes from webhooks and the log alone, so a loss is not covered up
  // by a re-read. No entity cache, so a Redis that refuses writes fails the append itself.
  const env: Record<string, string> = {
    PAYMENTS_API_URL: stripping.url,
    WEBHOOK_SECRETS: WEBHOOK_SECRET,
    LOG_LEVEL: 'info',
    RECONCILE_READS_PER_SECOND: '0',
    ENTITY_CACHE: 'false',
    RATE_LIMIT_PER_MINUTE: '0',
    IDEMPOTENCY_QUARANTINE_MS: String(options.quarantineMs),
    ...options.env,
  };
  const names: string[] = [];
  const envOf = new Map<string, Record<string, string>>();
  if (options.shape === 'redis') {
    redisDir = folder('redis');
    redis = await startRedisServer(redisArgs());
    proxy = await startTcpProxy(redis.port);
    for (const name of ['A', 'B']) {
      names.push(name);
      envOf.set(name, { ...env, REDIS_URL: `redis://127.0.0.1:${proxy.port}`, DATA_DIR: folder(`data-${name}`) });
    }
  } else {
    names.push('S');
    envOf.set('S', { ...env, DATA_DIR: folder('data-S') });
  }

  const running = new Map<string, Gateway>();
  const start = async (name: string): Promise<Gateway> => {
    const process = await spawnMain(envOf.get(name)!, gatewayReady);
    const port = Number(process.found.port);
    const gateway = { name, port, url: process.found.url!, wsUrl: `ws://127.0.0.1:${port}/graphql`, process };
    running.set(name, gateway);
    return gateway;
  };
  await Promise.all(names.map(start));

  const gateway = (name: string) => {
    const found = running.get(name);
    if (!found) throw new Error(`no gateway ${name}`);
    return found;
  };

  return {
    shape: options.shape,
    emulator,
    gateways: () => names.map(gateway),
    gateway,
    onWrite(next) {
      hook = next;
    },
    async kill(name) {
      const { child } = gateway(name).process;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
    restart: start,
    redis() {
      if (!redis || !proxy) throw new Error('this world has no Redis');
      const server = redis;
      const tcp = proxy;
      return {
        kill: () => server.kill(),
        async restartFromFile() {
          redis = await startRedisServer(redisArgs(), server.port);
        },
        async restartEmpty() {
          redisDir = folder('redis-empty');
          redis = await startRedisServer(redisArgs(), server.port);
        },
        cutOff: () => tcp.stall(),
        reconnect: () => tcp.resume(),
      };
    },
    async stop() {
      await Promise.all([...running.values()].map((g) => g.process.stop()));
      await proxy?.close();
      await redis?.stop();
      await stripping.close();
      await emulator.stop();
      for (const dir of folders) rmSync(dir, { recursive: true, force: true });
    },
  };
}
