/**
 * `npm run bench -- polling`: checkout pages waiting on a payment. N frontends (one key, one account) each
 * poll one pending transaction every I ms for D s; then the payer approves it upstream and its signed
 * webhook reaches the gateway (the first run) or is lost (the second). Measured, for the gateway and for
 * the hand-written peer (bench/peer/server.ts), each in its own process over one emulator: upstream reads
 * of the transaction per minute while it waits, and the time from the approval to the first poll, and to
 * every frontend's poll, that shows it. Also counted: polls started after the webhook was acknowledged
 * that still answered PENDING (there should be none).
 */
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/ports.js';
import { factories } from '../test/support/factories.js';
import { readStatus } from '../test/support/polling.js';
import { postWebhook, setUpstreamStatus, transactionEvent } from '../test/realtime/support.js';
import { accountIdOf } from '../test/gateway/cache-support.js';
import { startBenchEmulator, type BenchEmulator } from './emulator-process.js';
import { entryPoints, fixed, gatewayNodeFlags, startServer, type Server } from './peer.js';
import { codeLine, loadLine, machineLine, markdownTable, ms, type Bench } from './support.js';

const KEY = 'sk_sandbox_bench_polling';
const SECRET = 'whsec_bench_polling';
const OPS_TOKEN = 'bench-polling-ops-token';
const ROUTE = 'GET /v1/transactions/:id';

const OPTIONS = {
  frontends: { type: 'string', default: '20' },
  interval: { type: 'string', default: '500' },
  duration: { type: 'string', default: '60' },
  latency: { type: 'string', default: process.env.BENCH_LATENCY_MS ?? '5' },
  'max-age': { type: 'string' },
  'from-source': { type: 'boolean', default: false },
} as const;

interface Settings {
  frontends: number;
  intervalMs: number;
  durationMs: number;
  latencyMs: number;
  /** PENDING_OBJECT_MAX_AGE_MS of the gateway; null: its default. */
  maxAgeMs: number | null;
  fromSource: boolean;
}

function readSettings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: 'frontends' | 'interval' | 'duration' | 'latency' | 'max-age', min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return value;
  };
  return {
    frontends: Math.floor(num('frontends', 1)),
    intervalMs: Math.floor(num('interval', 10)),
    durationMs: num('duration', 1) * 1000,
    latencyMs: Math.floor(num('latency', 0)),
    maxAgeMs: values['max-age'] === undefined ? null : Math.floor(num('max-age', 0)),
    fromSource: values['from-source'],
  };
}

export const pollingBench: Bench = {
  name: 'polling',
  summary: 'N frontends polling one pending payment, approved by webhook and with its webhook lost: upstream reads/min and time to show the approval, gateway beside the peer',
  usage: [
    '--frontends <n>   pollers, one key (default 20)',
    '--interval <ms>   each poller\'s period (default 500)',
    '--duration <s>    polling before the approval (default 60; use 5 to 10 while developing)',
    '--latency <ms>    injected emulator latency per request (env BENCH_LATENCY_MS, default 5)',
    '--max-age <ms>    the gateway\'s PENDING_OBJECT_MAX_AGE_MS (default: its own default)',
    '--from-source     run the gateway and the peer under tsx instead of built JavaScript',
  ],
  run: async (argv) => runPollingBench(readSettings(argv)),
};

interface Row {
  server: string;
  webhook: 'delivered' | 'lost';
  pollsPerMin: number;
  readsPerMin: number;
  /** Of readsPerMin, the gateway's background re-reads (reconciler). */
  rereadsPerMin: number;
  firstMs: number;
  allMs: number;
  /** From the approval to the webhook's acknowledgement (posting it included); NaN when none was sent. */
  ackMs: number;
  stale: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rereads(server: Server): Promise<number> {
  if (server.name.startsWith('peer')) return 0;
  const res = await fetch(server.url.replace(/\/graphql$/, '/healthz'), { headers: { authorization: `Bearer ${OPS_TOKEN}` } });
  return ((await res.json()) as { reconcile?: { reads?: number } }).reconcile?.reads ?? 0;
}

/** One scenario on one server: a fresh pending transaction, N pollers, then its approval. */
async function scenario(server: Server, emulator: BenchEmulator, make: ReturnType<typeof factories>, accountId: number, webhook: boolean, s: Settings): Promise<Row> {
  const tx = await make.transaction({ amount: 1000 + Math.floor(Math.random() * 1000) });
  const timeoutMs = 30_000;
  let phase: 'waiting' | 'approved' | 'done' = 'waiting';
  let approvedAt = Number.POSITIVE_INFINITY;
  let ackedAt = Number.POSITIVE_INFINITY;
  const firstSeen: number[] = [];
  let polls = 0;
  let stale = 0;
  const errors: string[] = [];
  const poller = async (n: number) => {
    await sleep((s.intervalMs * n) / s.frontends);
    while (phase !== 'done') {
      const startedAt = Date.now();
      const answer = await readStatus(server.url, KEY, tx.id).catch((e: unknown) => ({ status: null, errors: [String(e)] }));
      if (answer.errors) errors.push(JSON.stringify(answer.errors).slice(0, 200));
      if (phase === 'waiting') polls += 1;
      if (answer.status === 'APPROVED') {
        firstSeen[n] ??= Date.now();
        if (firstSeen.filter((t) => t !== undefined).length === s.frontends) phase = 'done';
      } else if (startedAt > ackedAt) stale += 1;
      if (phase !== 'done') await sleep(Math.max(0, startedAt + s.intervalMs - Date.now()));
    }
  };
  await emulator.resetStats();
  const rereadsBefore = await rereads(server);
  const started = Date.now();
  const running = Promise.all(Array.from({ length: s.frontends }, (_, n) => poller(n)));
  await sleep(s.durationMs);
  const waitedMs = Date.now() - started;
  const reads = (await emulator.stats()).routes[ROUTE] ?? 0;
  const rereadCount = (await rereads(server)) - rereadsBefore;
  const pollsWaiting = polls;
  await setUpstreamStatus(emulator.url, 'transactions', tx.id, 'approved');
  approvedAt = Date.now();
  phase = 'approved';
  if (webhook && !server.name.startsWith('peer')) {
    const port = Number(new URL(server.url).port);
    const delivered = await postWebhook(port, transactionEvent({ accountId, transaction: { ...tx, status: 'approved', updated_at: new Date().toISOString() } }), { secret: SECRET });
    if (delivered.status !== 200) throw new Error(`${server.name}: webhook answered ${delivered.status}`);
    ackedAt = Date.now();
  }
  const timer = setTimeout(() => (phase = 'done'), timeoutMs);
  await running;
  clearTimeout(timer);
  if (errors.length > 0) throw new Error(`${server.name}: ${errors.length} polls failed, first: ${errors[0]}`);
  const seen = firstSeen.filter((t): t is number => t !== undefined);
  const perMin = (n: number) => (n * 60_000) / waitedMs;
  return {
    server: server.name,
    webhook: webhook ? 'delivered' : 'lost',
    pollsPerMin: perMin(pollsWaiting),
    readsPerMin: perMin(reads),
    rereadsPerMin: perMin(rereadCount),
    firstMs: seen.length > 0 ? Math.min(...seen) - approvedAt : Number.NaN,
    allMs: seen.length === s.frontends ? Math.max(...seen) - approvedAt : Number.NaN,
    ackMs: Number.isFinite(ackedAt) ? ackedAt - approvedAt : Number.NaN,
    stale,
  };
}

async function runPollingBench(s: Settings): Promise<void> {
  const emulator = await startBenchEmulator({ latencyMs: s.latencyMs, separateProcess: true });
  const servers: Server[] = [];
  try {
    const make = factories(emulator, KEY);
    const accountId = await accountIdOf(make);
    const entry = entryPoints(s.fromSource);
    const [peerPort, gatewayPort] = [await freePort(), await freePort()];
    servers.push(await startServer('peer (datasource-rest)', entry.peer, { PEER_PORT: String(peerPort), PAYMENTS_API_URL: emulator.url }, peerPort, null));
    const gatewayEnv = {
      PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      PAYMENTS_API_URL: emulator.url,
      WEBHOOK_SECRETS: SECRET,
      OPS_TOKEN,
      // Twenty pages of one merchant, one key: the per-key rate limit would measure itself.
      RATE_LIMIT_PER_MINUTE: '0',
      ...(s.maxAgeMs === null ? {} : { PENDING_OBJECT_MAX_AGE_MS: String(s.maxAgeMs) }),
    };
    servers.push(await startServer('gateway', entry.gateway, gatewayEnv, gatewayPort, null, gatewayNodeFlags()));

    console.log('# polling bench: checkout pages waiting on a payment');
    console.log(machineLine());
    console.log(codeLine());
    console.log(s.fromSource ? 'gateway and peer from their TypeScript under tsx' : `gateway from ${entry.gateway} (npm run build), the peer transpiled the same way, both on plain node`);
    console.log(`${s.frontends} frontends, one key, each polling one pending transaction every ${s.intervalMs} ms for ${s.durationMs / 1000} s, then approved upstream; L = ${s.latencyMs} ms per upstream request`);
    console.log(`gateway: WEBHOOK_SECRETS set, no REDIS_URL, PENDING_OBJECT_MAX_AGE_MS ${s.maxAgeMs ?? 'default (5000)'}, reconciler defaults; each server and the emulator in its own process`);
    console.log(`before: ${loadLine()}\n`);

    const rows: Row[] = [];
    for (const webhook of [true, false]) for (const server of servers) rows.push(await scenario(server, emulator, make, accountId, webhook, s));

    console.log(
      markdownTable(
        ['server', 'webhook', 'polls/min', 'upstream reads/min', 'of which re-reads', 'approval -> webhook acknowledged (ms)', 'approval -> first poll showing it (ms)', '-> every frontend (ms)', 'PENDING after the ack'],
        rows.map((r) => [r.server, r.server.startsWith('peer') ? '(none)' : r.webhook, fixed(r.pollsPerMin, 0), fixed(r.readsPerMin, 1), fixed(r.rereadsPerMin, 1), ms(r.ackMs), ms(r.firstMs), ms(r.allMs), Number.isFinite(r.ackMs) ? String(r.stale) : '-']),
      ),
    );
    console.log('\nupstream reads/min, gateway / peer:');
    for (const webhook of ['delivered', 'lost'] as const) {
      const peer = rows.find((r) => r.webhook === webhook && r.server.startsWith('peer'))!;
      const gateway = rows.find((r) => r.webhook === webhook && !r.server.startsWith('peer'))!;
      console.log(`  webhook ${webhook}: ${fixed(gateway.readsPerMin / peer.readsPerMin, 3)} (${fixed(gateway.readsPerMin, 1)} / ${fixed(peer.readsPerMin, 1)})`);
    }
    console.log(`\nafter: ${loadLine()}`);
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
    await emulator.stop();
  }
}
