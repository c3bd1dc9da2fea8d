/**
 * Runs src/main.ts as its own process, the way `npm start` does, and waits
 * for the line that says where it listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Variables a developer's shell may carry that would change what main.ts does. */
const SCRUBBED = ['PAYMENTS_API_URL', 'WEBHOOK_SECRETS', 'REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER', 'REDIS_PASSWORD', 'EMULATOR_PORT', 'EMULATOR_FORWARD_TO', 'EMULATOR_FORWARD_SECRET', 'EMULATOR_SETTLE_MS', 'DATA_DIR'];

/**
 * A data folder of its own for one process, removed when it exits, unless `env` names one: without REDIS_URL a
 * gateway keeps its idempotency records there, and two processes may not share one.
 */
export function withDataDir(env: Record<string, string>, child: () => ChildProcess): ChildProcess {
  if (env.DATA_DIR) return child();
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-data-'));
  env.DATA_DIR = dir;
  const started = child();
  started.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return started;
}

export interface GatewayProcess {
  child: ChildProcess;
  /** What `ready` extracted from the output. */
  found: Record<string, string>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

export function spawnMain(
  env: Record<string, string>,
  ready: (output: string) => Record<string, string> | null,
  timeoutMs = 60_000,
): Promise<GatewayProcess> {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED) delete fullEnv[name];
  Object.assign(fullEnv, { PORT: '0', HOST: '127.0.0.1' }, env);
  const child = withDataDir(fullEnv as Record<string, string>, () => spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`src/main.ts did not become ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const found = ready(out);
      if (found) {
        clearTimeout(timer);
        resolve({ child, found, output: () => out, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`src/main.ts exited with ${code}:\n${out}`));
    });
  });
}

/**
 * Runs src/main.ts with only `env` (and PATH) to its exit, for start-ups that
 * must refuse: its exit code and everything it printed. Killed after `timeoutMs`.
 */
export function runMainToExit(env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const own = { PATH: process.env.PATH ?? '', ...env };
    const child = withDataDir(own, () => spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: own, stdio: ['ignore', 'pipe', 'pipe'] }));
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The `gateway ready` log line of a gateway started with PAYMENTS_API_URL. */
export const gatewayReady = (out: string) => {
  const url = /"url":"(http:\/\/[^"]+\/graphql)"/.exec(out)?.[1];
  return url ? { url, port: new URL(url).port } : null;
};

/** The welcome text of a gateway started with its embedded emulator. */
export const welcomePrinted = (out: string) => {
  const url = /GraphQL\s+(http:\/\/\S+\/graphql)/.exec(out)?.[1];
  const key = /Sandbox key\s+(sk_sandbox_\S+)/.exec(out)?.[1];
  return url && key ? { url, key } : null;
};

/** A gateway process and where to reach it. */
export interface GatewayInstance {
  process: GatewayProcess;
  port: number;
  wsUrl: string;
}

/** `npm start`'s entry point run `count` times with the same environment, side by side. */
export function startInstances(env: Record<string, string>, count = 2): Promise<GatewayInstance[]> {
  const start = async (): Promise<GatewayInstance> => {
    const process = await spawnMain(env, gatewayReady);
    const port = Number(process.found.port);
    return { process, port, wsUrl: `ws://127.0.0.1:${port}/graphql` };
  };
  return Promise.all(Array.from({ length: count }, start));
}
