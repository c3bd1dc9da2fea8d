/**
 * Two gateway processes without Redis on one data folder (two containers on one volume): the second refuses to
 * start, naming the folder and the holder; once the first stops, the folder is free again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { gatewayReady, runMainToExit, spawnMain, type GatewayProcess } from '../realtime/processes.js';

describe('two gateway processes on one DATA_DIR', () => {
  let emulator: RunningEmulator;
  let dataDir: string;
  const started: GatewayProcess[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-lock-'));
  });
  afterAll(async () => {
    for (const g of started) g.child.kill('SIGKILL');
    await emulator?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses the second with a message naming the folder, and lets one start once the first stopped', async () => {
    const env = { DATA_DIR: dataDir, PAYMENTS_API_URL: emulator.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    const first = await spawnMain(env, gatewayReady);
    started.push(first);

    // Its refusal waits for the first's next touch of the lock (2 s); the rest is start-up on a loaded machine.
    const second = await runMainToExit(env, 45_000);
    expect(second.code).toBe(1);
    expect(second.output).toContain(`DATA_DIR ${dataDir} is in use by another gateway (pid ${first.child.pid} on host`);
    expect(second.output).not.toContain('gateway ready');
    // The first kept serving.
    expect((await fetch(first.found.url!.replace('/graphql', '/healthz'))).status).toBe(200);

    await first.stop();
    const third = await spawnMain(env, gatewayReady);
    started.push(third);
    await third.stop();
  }, 90_000);
});
