/**
 * SIGTERM on the real entry point (`tsx src/main.ts`, as `npm start` runs it) while operations are in
 * flight against a slow emulator: every operation is answered, /readyz turns
 * 503, new connections are refused, subscriptions are closed with 1001, and
 * the process exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';

const LATENCY_MS = 1_200;
const OPERATIONS = 50;

async function startGatewayProcess(upstreamUrl: string): Promise<{ child: ChildProcess; url: string }> {
  // tsx relays SIGTERM to the gateway and exits with its code; `npx` would not:
  // npm dies of the signal at once and leaves the gateway orphaned.
  const child = spawn('node_modules/.bin/tsx', ['src/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      PAYMENTS_API_URL: upstreamUrl,
      LOG_LEVEL: 'info',
      SHUTDOWN_READINESS_DELAY_MS: '300',
      SHUTDOWN_GRACE_MS: '10000',
      // One key sends all 50 operations: let it use every slot of the route (fairness is tested elsewhere).
      UPSTREAM_CALLER_SHARE: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('gateway did not start within 20 s'));
    }, 20_000);
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'gateway ready' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`gateway exited early with ${code}`)));
  });
  lines.on('line', () => undefined); // keep draining stdout
  return { child, url };
}

describe('graceful shutdown', () => {
  let emulator: RunningEmulator;
  let apiKey: string;
  let transactionId: number;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    apiKey = newKey('shutdown');
    transactionId = (await factories(emulator, apiKey).transaction({ amount: 4200 })).id;
    emulator.addFault({ route: '*', latencyMs: LATENCY_MS });
  });
  afterAll(() => emulator.stop());

  let running: ChildProcess | undefined;
  afterEach(() => {
    // A failed assertion must not leave the gateway running.
    if (running && running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
  });

  it(`answers all ${OPERATIONS} in-flight operations after SIGTERM, closes subscriptions with 1001 and exits 0`, async () => {
    const { child, url } = await startGatewayProcess(emulator.url);
    running = child;
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;

    const ws = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    await once(ws, 'open');
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${apiKey}` } }));
    await once(ws, 'message');
    const wsClosed = once(ws, 'close') as Promise<[number, Buffer]>;

    const before = emulator.stats().total;
    const answers = Array.from({ length: OPERATIONS }, (_, i) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ query: `query Op${i}($id: ID!) { transaction(id: $id) { id amount } }`, variables: { id: String(transactionId) } }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { data?: { transaction: { amount: number } }; errors?: unknown } })),
    );
    // Every operation has reached the upstream: they are in flight.
    while (emulator.stats().total - before < OPERATIONS) await new Promise((r) => setTimeout(r, 20));

    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const ready = await fetch(new URL('/readyz', url));
    await new Promise((r) => setTimeout(r, 400));
    const late = await fetch(new URL('/healthz', url)).then(
      () => 'accepted',
      (e: { cause?: { code?: string } }) => e.cause?.code ?? 'failed',
    );
    const results = await Promise.all(answers);
    const [code] = await exited;
    const [closeCode] = await wsClosed;

    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining' });
    expect(late).toBe('ECONNREFUSED');
    expect(results.map((r) => r.status)).toEqual(Array(OPERATIONS).fill(200));
    for (const r of results) {
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data!.transaction.amount).toBe(4200);
    }
    expect(closeCode).toBe(1001);
    expect(code).toBe(0);
  }, 40_000);
});
