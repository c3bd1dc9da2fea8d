/**
 * SIGTERM on the real entry point (`tsx src/main.ts`, as `npm start` runs it) while operations are in
 * flight against a slow emulator: every operation is answered, /readyz turns
 * 503, new connections are refused, subscriptions are closed with 1001, and
 * the process exits 0. When the work is slower than SHUTDOWN_GRACE_MS it is
 * cut, the log says how much, and the exit is 1; a cut keyed mutation,
 * retried with its key on a new process sharing Redis, is created once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { withDataDir } from '../realtime/processes.js';

const LATENCY_MS = 1_200;
const OPERATIONS = 50;

interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Every JSON log line it wrote so far. */
  logs: { level?: number; msg?: string; cutRequests?: number }[];
}

async function startGatewayProcess(upstreamUrl: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  // tsx relays SIGTERM to the gateway and exits with its code; `npx` would not:
  // npm dies of the signal at once and leaves the gateway orphaned.
  const own: Record<string, string> = { ...env };
  const child = withDataDir(own, () => spawn('node_modules/.bin/tsx', ['src/main.ts'], {
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
      ...own,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  }));
  const lines = createInterface({ input: child.stdout! });
  const logs: GatewayProcess['logs'] = [];
  lines.on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as GatewayProcess['logs'][number]);
    } catch {
      // not a log line
    }
  });
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
  return { child, url, logs };
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

const CREATE = `mutation Create($input: CreateCustomerInput!, $key: String) {
  createCustomer(input: $input, idempotencyKey: $key) { customer { id email } userErrors { message } }
}`;
const MUTATIONS = 20;

/** POSTs one keyed createCustomer; the status and body, or the error's code when the connection was cut. */
function create(url: string, apiKey: string, idempotencyKey: string, email: string) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ query: CREATE, variables: { key: idempotencyKey, input: { firstname: 'Ada', lastname: 'Cut', email } } }),
  }).then(
    async (res) => ({ status: res.status, body: (await res.json()) as { data?: { createCustomer: { customer: { id: string } | null } }; errors?: { extensions?: { code?: string } }[] } }),
    (error: { cause?: { code?: string } }) => ({ status: 0, code: error.cause?.code ?? 'failed' }),
  );
}

/** The customers the upstream holds for `apiKey`: what was charged, however many times the gateway asked. */
async function customersUpstream(emulator: RunningEmulator, apiKey: string): Promise<{ id: number; email: string }[]> {
  const res = await fetch(`${emulator.url}/v1/customers?per_page=100`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { 'v1/customers': { id: number; email: string }[] })['v1/customers'];
}

describe('shutdown that has to cut work', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    emulator.addFault({ route: 'POST /v1/customers', latencyMs: 2_000 });
  });
  afterAll(() => emulator.stop());

  let running: ChildProcess | undefined;
  afterEach(() => {
    if (running && running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
  });

  it(`cuts ${MUTATIONS} in-flight mutations slower than the grace, logs how many, and exits 1`, async () => {
    const apiKey = newKey('cut');
    const { child, url, logs } = await startGatewayProcess(emulator.url, { SHUTDOWN_READINESS_DELAY_MS: '0', SHUTDOWN_GRACE_MS: '300' });
    running = child;
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    const before = emulator.stats().total;
    const answers = Array.from({ length: MUTATIONS }, (_, i) => create(url, apiKey, `cut-${i}`, `cut${i}@example.com`));
    while (emulator.stats().total - before < MUTATIONS) await new Promise((r) => setTimeout(r, 20));

    child.kill('SIGTERM');
    const results = await Promise.all(answers);
    const [code] = await exited;

    expect(results.every((r) => r.status === 0)).toBe(true);
    expect(code).toBe(1);
    const cut = logs.find((l) => l.cutRequests !== undefined);
    expect(cut).toMatchObject({ cutRequests: MUTATIONS, msg: expect.stringContaining(`${MUTATIONS} in-flight request(s) cut`) });
    expect(cut!.level).toBeGreaterThanOrEqual(50);
  }, 40_000);

  it(`answers ${MUTATIONS} in-flight mutations that finish within the grace, and exits 0`, async () => {
    const apiKey = newKey('within');
    const { child, url, logs } = await startGatewayProcess(emulator.url, { SHUTDOWN_READINESS_DELAY_MS: '0', SHUTDOWN_GRACE_MS: '8000' });
    running = child;
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    const before = emulator.stats().total;
    const answers = Array.from({ length: MUTATIONS }, (_, i) => create(url, apiKey, `within-${i}`, `within${i}@example.com`));
    while (emulator.stats().total - before < MUTATIONS) await new Promise((r) => setTimeout(r, 20));

    child.kill('SIGTERM');
    const results = await Promise.all(answers);
    const [code] = await exited;

    for (const r of results) expect('body' in r && r.body.data?.createCustomer.customer?.id).toBeTruthy();
    expect(code).toBe(0);
    expect(logs.some((l) => l.cutRequests !== undefined)).toBe(false);
    expect(await customersUpstream(emulator, apiKey)).toHaveLength(MUTATIONS);
  }, 40_000);
});

/**
 * A slow payments API that acts on every request it has read, as a real one
 * does: the emulator behind it, reached `delayMs` after the request arrived,
 * whether or not the caller is still there.
 */
async function slowUpstream(target: string, delayMs: number): Promise<{ url: string; writes(): number; close(): Promise<void> }> {
  let writes = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') writes += 1;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      setTimeout(() => {
        const headers = Object.fromEntries(['authorization', 'content-type', 'idempotency-key'].flatMap((h) => (typeof req.headers[h] === 'string' ? [[h, req.headers[h]]] : [])));
        const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
        void fetch(`${target}${req.url}`, { method: req.method!, headers, body }).then(async (answer) => {
          const text = await answer.text();
          if (!res.destroyed) res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
        });
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writes: () => writes,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describeWith('redis-server', 'a mutation cut by shutdown, retried with its key on another process', () => {
  let emulator: RunningEmulator;
  let upstream: Awaited<ReturnType<typeof slowUpstream>>;
  let redis: RedisServer;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    upstream = await slowUpstream(emulator.url, 1_500);
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await upstream.close();
    await emulator.stop();
    await redis.stop();
  });

  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('is created upstream once: the retry waits out the claim the cut process left (IDEMPOTENCY_IN_PROGRESS), then the upstream replays the first create', async () => {
    const apiKey = newKey('retry');
    // A short deadline: the claim a cut process leaves frees itself 5 s after it.
    const env = { REDIS_URL: redis.url, SHUTDOWN_READINESS_DELAY_MS: '0', SHUTDOWN_GRACE_MS: '200', OPERATION_DEADLINE_MS: '3000', IDEMPOTENCY_WAIT_MS: '500' };
    const first = await startGatewayProcess(upstream.url, env);
    started.push(first.child);
    const exited = once(first.child, 'exit') as Promise<[number | null, string | null]>;
    const cut = create(first.url, apiKey, 'retry-me', 'retry@example.com');
    while (upstream.writes() === 0) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGTERM');
    expect(await cut).toMatchObject({ status: 0 });
    expect((await exited)[0]).toBe(1);

    // The slow upstream created the customer after the first gateway was gone.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await customersUpstream(emulator, apiKey)).toHaveLength(1);
    const second = await startGatewayProcess(upstream.url, env);
    started.push(second.child);
    // The client retries with the same key until it gets an answer (IDEMPOTENCY_IN_PROGRESS meanwhile).
    const codes: string[] = [];
    let id: string | undefined;
    for (let attempt = 0; attempt < 30 && !id; attempt++) {
      const r = await create(second.url, apiKey, 'retry-me', 'retry@example.com');
      if ('body' in r && r.body.data?.createCustomer.customer) id = r.body.data.createCustomer.customer.id;
      else {
        codes.push('body' in r ? String(r.body.errors?.[0]?.extensions?.code) : r.code);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    expect(id).toBeDefined();
    expect(codes.every((c) => c === 'IDEMPOTENCY_IN_PROGRESS')).toBe(true);
    const customers = await customersUpstream(emulator, apiKey);
    expect(customers.filter((c) => c.email === 'retry@example.com')).toHaveLength(1);
    expect(String(customers[0]!.id)).toBe(id);
    // The retry did reach the upstream, with the first attempt's key, and was answered with the first create.
    expect(emulator.stats().routes['POST /v1/customers']).toBe(2);
    second.child.kill('SIGTERM');
    expect((await once(second.child, 'exit'))[0]).toBe(0);
  }, 60_000);
});
