/**
 * Reconciliation bench: what a subscriber waits for, and what the upstream
 * pays, when every webhook is lost (the emulator forwards none).
 *
 *  1. Latency: K pending transactions with one `transactionUpdated(id)`
 *     subscriber each; each is approved upstream (emulator admin API) at a
 *     random moment of its backoff schedule, and the time from the approval
 *     to the subscriber holding APPROVED is measured.
 *  2. Cost: N waiting subscriptions, on N distinct pending transactions and
 *     on one; after the waits have grown to the cap, the upstream's reads of
 *     `GET /v1/transactions/:id` are counted (emulator stats) over a window
 *     and given per minute, next to the expected N x 60 s / mean wait,
 *     capped by RECONCILE_READS_PER_SECOND.
 *
 * Gateway, emulator and subscribers share this process; waits are shortened
 * (options) so a run takes about a minute: the figures scale with them.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { startEmulator, type RunningEmulator } from '../emulator/index.js';
import { createLogger } from '../src/logger.js';
import { startGateway, type RunningGateway } from '../src/server/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { factories } from '../test/support/factories.js';
import { codeLine, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const OPTIONS = {
  'initial-ms': { type: 'string', default: '250' },
  'max-ms': { type: 'string', default: '2000' },
  jitter: { type: 'string', default: '0.2' },
  'reads-per-second': { type: 'string', default: '20' },
  changes: { type: 'string', default: '60' },
  waiting: { type: 'string', default: '10,100,1000' },
  window: { type: 'string', default: '10' },
} as const;

const QUERY = 'subscription ($id: ID) { transactionUpdated(id: $id) { id status } }';
const PER_CONNECTION = 100;

interface Settings {
  initialMs: number;
  maxMs: number;
  jitter: number;
  readsPerSecond: number;
  changes: number;
  waiting: number[];
  windowMs: number;
}

function settings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: keyof typeof OPTIONS, min: number): number => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return value;
  };
  return {
    initialMs: num('initial-ms', 10),
    maxMs: num('max-ms', 10),
    jitter: num('jitter', 0),
    readsPerSecond: num('reads-per-second', 1),
    changes: num('changes', 1),
    waiting: String(values.waiting).split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0),
    windowMs: num('window', 1) * 1000,
  };
}

interface Stack {
  emulator: RunningEmulator;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

async function startStack(s: Settings): Promise<Stack> {
  // No forwardTo: every webhook is lost; only re-reads bring changes.
  const emulator = await startEmulator({ port: 0, settleMs: 50 });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PAYMENTS_API_URL: emulator.url,
    LOG_LEVEL: 'silent',
    RECONCILE_INITIAL_MS: String(s.initialMs),
    RECONCILE_MAX_MS: String(s.maxMs),
    RECONCILE_JITTER: String(s.jitter),
    RECONCILE_READS_PER_SECOND: String(s.readsPerSecond),
    // Thousands of subscriptions from one address and one key: a load test, not an attack (docs/security.md).
    WS_MAX_CONNECTIONS_PER_KEY: '100000',
    WS_MAX_SUBSCRIPTIONS_PER_KEY: '100000',
    WS_SUBSCRIBE_PER_MINUTE: '1000000',
    WS_CONNECTS_PER_MINUTE: '1000000',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs });
  const gateway = await startGateway({ config, upstream, logger: createLogger('silent') });
  return {
    emulator,
    gateway,
    async stop() {
      await gateway.stop();
      upstream.close();
      await emulator.stop();
    },
  };
}

/** Subscribes to each id, PER_CONNECTION to a connection; `onStatus` hears every value. */
async function subscribeAll(stack: Stack, key: string, ids: number[], onStatus: (id: number, status: string) => void): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < ids.length; i += PER_CONNECTION) {
    let connected!: () => void;
    const ready = new Promise<void>((resolve) => (connected = resolve));
    const client = createClient({
      url: `ws://127.0.0.1:${stack.gateway.port}/graphql`,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${key}` },
      on: { connected: () => connected() },
      onNonLazyError: () => undefined,
    });
    await ready;
    clients.push(client);
    for (const id of ids.slice(i, i + PER_CONNECTION)) {
      client.subscribe<{ transactionUpdated: { id: string; status: string } }>(
        { query: QUERY, variables: { id: String(id) } },
        { next: (r) => r.data && onStatus(id, r.data.transactionUpdated.status), error: () => undefined, complete: () => undefined },
      );
    }
  }
  return clients;
}

async function pendingTransactions(emulator: RunningEmulator, key: string, n: number): Promise<number[]> {
  const f = factories(emulator, key);
  const ids: number[] = [];
  for (let i = 0; i < n; i += 50) ids.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, async () => (await f.transaction()).id))));
  return ids;
}

async function until(ok: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

const approve = async (emulator: RunningEmulator, id: number) => {
  const res = await fetch(`${emulator.url}/_emulator/transactions/${id}/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"status":"approved"}' });
  await res.arrayBuffer();
};

async function latency(s: Settings): Promise<{ samples: number[]; missed: number; deferred: number }> {
  const stack = await startStack(s);
  const key = `sk_sandbox_bench_rec_lat_${process.pid}`;
  try {
    const ids = await pendingTransactions(stack.emulator, key, s.changes);
    const approvedAt = new Map<number, number>();
    const samples: number[] = [];
    const clients = await subscribeAll(stack, key, ids, (id, status) => {
      const t0 = approvedAt.get(id);
      if (status === 'APPROVED' && t0 !== undefined) samples.push(performance.now() - t0);
    });
    // Changes land anywhere in the schedule: from the first wait to well past the cap.
    const spreadMs = s.initialMs + 2 * s.maxMs;
    await Promise.all(
      ids.map(async (id) => {
        await new Promise((r) => setTimeout(r, Math.random() * spreadMs));
        approvedAt.set(id, performance.now());
        await approve(stack.emulator, id);
      }),
    );
    await until(() => samples.length === ids.length, 2 * s.maxMs + 5000 + (ids.length / s.readsPerSecond) * 1000);
    await Promise.all(clients.map((c) => c.dispose()));
    return { samples, missed: ids.length - samples.length, deferred: (await health(stack)).deferred };
  } finally {
    await stack.stop();
  }
}

interface CostRow {
  subscriptions: number;
  objects: number;
  reads: number;
  perMinute: number;
  expected: number;
  deferred: number;
}

async function cost(s: Settings, subscriptions: number, objects: number): Promise<CostRow> {
  const stack = await startStack(s);
  const key = `sk_sandbox_bench_rec_cost_${process.pid}_${subscriptions}_${objects}`;
  try {
    const ids = await pendingTransactions(stack.emulator, key, objects);
    let received = 0;
    const targets = Array.from({ length: subscriptions }, (_, i) => ids[i % ids.length]!);
    const clients = await subscribeAll(stack, key, targets, () => (received += 1));
    await until(() => received >= subscriptions, 60_000);
    // Let the waits grow to the cap: initial, 2x, 4x, ... then one more cap.
    let ramp = 0;
    for (let w = s.initialMs; w < s.maxMs; w *= 2) ramp += w;
    await new Promise((r) => setTimeout(r, ramp + s.maxMs));
    const healthBefore = await health(stack);
    stack.emulator.resetStats();
    const started = performance.now();
    await new Promise((r) => setTimeout(r, s.windowMs));
    const reads = stack.emulator.stats().routes['GET /v1/transactions/:id'] ?? 0;
    const elapsed = performance.now() - started;
    const healthAfter = await health(stack);
    await Promise.all(clients.map((c) => c.dispose()));
    const meanWait = s.maxMs * (1 - s.jitter / 2);
    const expected = Math.min(objects * (60_000 / meanWait), s.readsPerSecond * 60);
    return { subscriptions, objects, reads, perMinute: (reads / elapsed) * 60_000, expected, deferred: healthAfter.deferred - healthBefore.deferred };
  } finally {
    await stack.stop();
  }
}

async function health(stack: Stack): Promise<{ deferred: number }> {
  const body = (await (await fetch(`http://127.0.0.1:${stack.gateway.port}/healthz`)).json()) as { reconcile: { deferred: number } };
  return body.reconcile;
}

async function runBench(argv: string[]): Promise<void> {
  const s = settings(argv);
  // Once with a cap the run never reaches (the schedule alone), once with the configured cap.
  const unbounded = { ...s, readsPerSecond: 100_000 };
  const latencies = [
    { label: `cap not reached`, ...(await latency(unbounded)) },
    { label: `cap ${s.readsPerSecond}/s`, ...(await latency(s)) },
  ];
  const rows: CostRow[] = [];
  for (const n of s.waiting) rows.push(await cost(s, n, n));
  const most = Math.max(...s.waiting);
  rows.push(await cost(s, most, 1));

  console.log('# Reconciliation bench (webhooks lost)\n');
  console.log(machineLine());
  console.log(loadLine());
  console.log(codeLine());
  console.log(
    `RECONCILE_INITIAL_MS=${s.initialMs} RECONCILE_MAX_MS=${s.maxMs} RECONCILE_JITTER=${s.jitter} RECONCILE_READS_PER_SECOND=${s.readsPerSecond}; ` +
      `documented bound: RECONCILE_MAX_MS (${s.maxMs} ms) + one upstream read\n`,
  );
  console.log('## Upstream change -> subscriber, no webhook');
  console.log(`${s.changes} pending transactions, one subscriber each, approved at random moments over ${s.initialMs + 2 * s.maxMs} ms.\n`);
  console.log(
    markdownTable(
      ['approved upstream -> APPROVED at the subscriber', 'p50 ms', 'p99 ms', 'max ms', 'not seen', 'reads deferred by the cap'],
      latencies.map((l) => [l.label, ms(percentile(l.samples, 50)), ms(percentile(l.samples, 99)), ms(Math.max(...l.samples)), String(l.missed), String(l.deferred)]),
    ),
  );
  console.log('\n## Upstream reads for waiting subscriptions');
  console.log(`Counted by the emulator over ${s.windowMs / 1000} s once the waits reached the cap; expected = objects x 60 s / mean wait (${s.maxMs * (1 - s.jitter / 2)} ms), at most ${s.readsPerSecond * 60}/min.\n`);
  console.log(
    markdownTable(
      ['waiting subscriptions', 'objects', 'reads in window', 'reads/min', 'expected/min', 'deferred by the cap'],
      rows.map((r) => [String(r.subscriptions), String(r.objects), String(r.reads), r.perMinute.toFixed(0), r.expected.toFixed(0), String(r.deferred)]),
    ),
  );
  const defaults = loadConfig({}).reconcile;
  console.log(
    `\nAt the defaults (${defaults.initialMs} ms to ${defaults.maxMs} ms, jitter ${defaults.jitter}, ${defaults.readsPerSecond}/s) a waiting object costs ` +
      `${(60_000 / (defaults.maxMs * (1 - defaults.jitter / 2))).toFixed(1)} reads/min once its waits reached the cap, however many subscribers it has.`,
  );
}

export const reconcileBench: Bench = {
  name: 'reconcile',
  summary: 'with webhooks lost: upstream change -> subscriber (p50/p99), and upstream reads per minute for N waiting subscriptions',
  usage: [
    '--initial-ms MS        RECONCILE_INITIAL_MS for the run (default 250)',
    '--max-ms MS            RECONCILE_MAX_MS for the run (default 2000)',
    '--jitter J             RECONCILE_JITTER (default 0.2)',
    '--reads-per-second R   RECONCILE_READS_PER_SECOND (default 20)',
    '--changes K            pending transactions approved for the latency figure (default 60)',
    '--waiting N,N,...      waiting subscriptions per cost row, one object each; the largest also on one object (default 10,100,1000)',
    '--window SEC           reads counted over this long per cost row (default 10)',
  ],
  run: runBench,
};
