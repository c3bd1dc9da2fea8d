/**
 * The emulator as a bench needs it: in this process (cheap to start, shares
 * the event loop with the gateway) or in a child process of its own, as a
 * real upstream would be, so that its CPU does not count against the gateway.
 * Either way stats come from the same counters (`/_emulator/stats`).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/ports.js';
import { startEmulator, type StatsSnapshot } from '../emulator/index.js';

export interface BenchEmulator {
  url: string;
  port: number;
  /** Where the emulator runs, for the bench's header. */
  where: 'in-process' | 'child process';
  stats(): Promise<StatsSnapshot>;
  resetStats(): Promise<void>;
  stop(): Promise<void>;
}

export interface BenchEmulatorOptions {
  latencyMs: number;
  separateProcess: boolean;
}

export async function startBenchEmulator({ latencyMs, separateProcess }: BenchEmulatorOptions): Promise<BenchEmulator> {
  if (!separateProcess) {
    const emulator = await startEmulator({ port: 0, host: '127.0.0.1', latencyMs, latencyJitterMs: 0, settleMs: 50 });
    return {
      url: emulator.url,
      port: emulator.port,
      where: 'in-process',
      stats: async () => emulator.stats(),
      resetStats: async () => emulator.resetStats(),
      stop: () => emulator.stop(),
    };
  }
  const port = await freePort();
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', 'emulator/main.ts'], {
    cwd: root,
    env: { ...process.env, EMULATOR_PORT: String(port), EMULATOR_HOST: '127.0.0.1', EMULATOR_LATENCY_MS: String(latencyMs), EMULATOR_LATENCY_JITTER_MS: '0', EMULATOR_SETTLE_MS: '50', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const admin = async (method: string, path: string) => {
    const res = await fetch(`${url}${path}`, { method });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
    const text = await res.text();
    return text ? (JSON.parse(text) as unknown) : null;
  };
  await waitUntilUp(`${url}/healthz`, child);
  return {
    url,
    port,
    where: 'child process',
    stats: async () => (await admin('GET', '/_emulator/stats')) as StatsSnapshot,
    resetStats: async () => void (await admin('DELETE', '/_emulator/stats')),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}


async function waitUntilUp(url: string, child: ReturnType<typeof spawn>): Promise<void> {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the emulator exited with code ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('the emulator did not start within 20 s');
}
