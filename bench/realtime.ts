/**
 * Real-time bench: webhook-in to subscriber-out latency, and how
 * many subscribers one gateway instance holds within a memory budget.
 *
 * The gateway runs in a child process (this file, forked), so its memory is
 * measured alone; the emulator (upstream), the webhook sender and the
 * graphql-ws subscribers run in this process, all on 127.0.0.1.
 *
 *  1. Capacity: open N connections with one `transactionUpdated` subscription
 *     each; the gateway's RSS and heap growth over N is the cost per subscriber.
 *  2. Latency, with those N connected: S of them share one account; signed
 *     webhooks are POSTed one after another, and every (event, subscriber)
 *     delivery is timed from just before the POST to the subscriber's receipt.
 *     The selection resolves no relation, so no upstream call is in the path.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { signWebhookBody, startEmulator, type RunningEmulator } from '../emulator/index.js';
import { createLogger } from '../src/logger.js';
import { startGateway } from '../src/server/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { factories } from '../test/support/factories.js';
import { startRedisServer, type RedisServer } from '../test/realtime/redis-server.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const SECRET = 'whsec_bench_realtime';
const CHILD_FLAG = 'REALTIME_BENCH_GATEWAY';
const MiB = 1024 * 1024;

const OPTIONS = {
  connections: { type: 'string', default: '2000' },
  subscribers: { type: 'string', default: '200' },
  events: { type: 'string', default: '200' },
  accounts: { type: 'string', default: '20' },
  'budget-mib': { type: 'string', default: '512' },
  redis: { type: 'boolean', default: false },
  'time-cap': { type: 'string', default: '90' },
} as const;

interface Settings {
  connections: number;
  subscribers: number;
  events: number;
  accounts: number;
  budgetMiB: number;
  redis: boolean;
  timeCapMs: number;
}

function settings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: Exclude<keyof typeof OPTIONS, 'redis'>, min: number): number => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return value;
  };
  const s = {
    connections: num('connections', 0),
    subscribers: num('subscribers', 1),
    events: num('events', 1),
    accounts: num('accounts', 1),
    budgetMiB: num('budget-mib', 64),
    redis: values.redis === true,
    timeCapMs: num('time-cap', 5) * 1000,
  };
  return s;
}

// ---------------------------------------------------------------------------
// Child: the gateway alone in its process.

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

async function gatewayChild(): Promise<void> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PAYMENTS_API_URL: process.env.BENCH_UPSTREAM_URL,
    WEBHOOK_SECRETS: SECRET,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
    LOG_LEVEL: 'silent',
    // Thousands of connections from one address and a few keys: a load test, not an attack (docs/security.md).
    WS_MAX_CONNECTIONS_PER_KEY: '100000',
    WS_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    WS_MAX_SUBSCRIPTIONS_PER_KEY: '100000',
    WS_SUBSCRIBE_PER_MINUTE: '1000000',
    WS_CONNECTS_PER_MINUTE: '1000000',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const upstream = createUpstreamClient({ baseUrl: config.paymentsApiUrl!, timeoutMs: config.upstreamTimeoutMs });
  const gateway = await startGateway({ config, upstream, logger: createLogger('silent') });
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (message: string) => {
    if (message === 'memory') {
      gc?.();
      gc?.();
      const m = process.memoryUsage();
      process.send!({ memory: { rss: m.rss, heapUsed: m.heapUsed, external: m.external } satisfies Memory });
    } else if (message === 'stop') {
      void gateway.stop().then(() => {
        upstream.close();
        process.exit(0);
      });
    }
  });
  process.send!({ port: gateway.port });
}

// ---------------------------------------------------------------------------
// Parent.

interface Gateway {
  child: ChildProcess;
  port: number;
  memory(): Promise<Memory>;
  stop(): Promise<void>;
}

async function forkGateway(upstreamUrl: string, redisUrl: string | null): Promise<Gateway> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, [CHILD_FLAG]: '1', BENCH_UPSTREAM_URL: upstreamUrl, ...(redisUrl ? { BENCH_REDIS_URL: redisUrl } : {}) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [first] = (await once(child, 'message')) as [{ port: number }];
  return {
    child,
    port: first.port,
    async memory() {
      child.send('memory');
      for (;;) {
        const [message] = (await once(child, 'message')) as [{ memory?: Memory }];
        if (message.memory) return message.memory;
      }
    },
    async stop() {
      const exited = once(child, 'exit');
      child.send('stop');
      await exited;
    },
  };
}

async function accountIdOf(emulator: RunningEmulator, key: string): Promise<number> {
  const body = (await factories(emulator, key).rest('GET', '/v1/accounts')) as Record<string, unknown>;
  return ((body['v1/accounts'] ?? body) as { id: number }[])[0]!.id;
}

interface Subscriber {
  client: Client;
  onValue: (handler: (id: number) => void) => void;
}

/** One graphql-ws connection with one transactionUpdated subscription, resolved once the server acknowledged it. */
async function openSubscriber(url: string, key: string): Promise<Subscriber> {
  let handler: (id: number) => void = () => undefined;
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${key}` },
    on: { connected: () => connected() },
    onNonLazyError: () => undefined,
  });
  client.subscribe<{ transactionUpdated: { id: string } }>(
    { query: 'subscription { transactionUpdated { id status amount } }' },
    {
      next: (result) => {
        if (result.data) handler(Number(result.data.transactionUpdated.id));
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
  await ready;
  return { client, onValue: (h) => (handler = h) };
}

async function runBench(argv: string[]): Promise<void> {
  const s = settings(argv);
  const deadline = Date.now() + s.timeCapMs;
  const emulator = await startEmulator({ port: 0 });
  let redis: RedisServer | null = null;
  if (s.redis) redis = await startRedisServer();
  const gateway = await forkGateway(emulator.url, redis?.url ?? null);
  const wsUrl = `ws://127.0.0.1:${gateway.port}/graphql`;
  const subscribers: Subscriber[] = [];
  const http = createJsonClient(1);
  try {
    const keys = Array.from({ length: s.accounts }, (_, i) => `sk_sandbox_bench_rt_${process.pid}_${i}`);
    // Warm-up: one connection per account, so the account lookups (cached per key) are not counted as subscriber cost.
    for (const key of keys) subscribers.push(await openSubscriber(wsUrl, key));
    const before = await gateway.memory();

    // 1. Capacity.
    let opened = 0;
    const batch = 100;
    while (opened < s.connections && Date.now() < deadline) {
      const n = Math.min(batch, s.connections - opened);
      const started = opened;
      subscribers.push(...(await Promise.all(Array.from({ length: n }, (_, i) => openSubscriber(wsUrl, keys[(started + i) % keys.length]!)))));
      opened += n;
    }
    const after = await gateway.memory();
    const perSubRss = opened > 0 ? (after.rss - before.rss) / opened : Number.NaN;
    const perSubHeap = opened > 0 ? (after.heapUsed + after.external - before.heapUsed - before.external) / opened : Number.NaN;
    const health = (await http.get(`http://127.0.0.1:${gateway.port}/healthz`)).body;

    // 2. Latency: S subscribers on one account (their own connections), events posted one after another.
    const hotKey = `sk_sandbox_bench_rt_hot_${process.pid}`;
    const accountId = await accountIdOf(emulator, hotKey);
    const hot: Subscriber[] = [];
    for (let i = 0; i < s.subscribers; i += 50) {
      hot.push(...(await Promise.all(Array.from({ length: Math.min(50, s.subscribers - i) }, () => openSubscriber(wsUrl, hotKey)))));
    }
    subscribers.push(...hot);
    const sentAt = new Map<number, number>();
    const deliveries: number[] = [];
    const acks: number[] = [];
    let pending: { remaining: number; done: () => void } | null = null;
    for (const sub of hot) {
      sub.onValue((id) => {
        const t0 = sentAt.get(id);
        if (t0 === undefined) return;
        deliveries.push(performance.now() - t0);
        if (pending && --pending.remaining === 0) pending.done();
      });
    }
    const started = Date.now();
    let sent = 0;
    for (let i = 0; i < s.events && Date.now() < deadline; i += 1) {
      const id = 1_000_000 + i;
      const body = JSON.stringify({
        id: 2_000_000_000 + i,
        type: 'transaction.approved',
        name: 'transaction.approved',
        object: 'transaction',
        entity: { id, status: 'approved', amount: 1000, updated_at: new Date().toISOString() },
        object_id: id,
        account_id: accountId,
        created_at: new Date().toISOString(),
      });
      const delivered = new Promise<void>((resolve) => (pending = { remaining: hot.length, done: resolve }));
      sentAt.set(id, performance.now());
      // The signature covers these exact bytes: sent as they are, not re-serialised.
      const res = await fetch(`http://127.0.0.1:${gateway.port}/webhooks/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-fedapay-signature': signWebhookBody(SECRET, body, Math.floor(Date.now() / 1000)) },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
      acks.push(performance.now() - sentAt.get(id)!);
      await Promise.race([delivered, new Promise((r) => setTimeout(r, 5000))]);
      sent += 1;
    }
    const elapsed = (Date.now() - started) / 1000;

    const budgetRoom = s.budgetMiB * MiB - before.rss;
    // RSS lags heap growth (and the reverse): budget on the larger of the two.
    const perSub = Math.max(perSubRss, perSubHeap);
    const fits = Number.isFinite(perSub) && perSub > 0 ? Math.floor(budgetRoom / perSub) : Number.NaN;
    const config = loadConfig({});
    console.log(`# Real-time bench (${s.redis ? 'Redis pub/sub bus' : 'in-memory bus'})\n`);
    console.log(machineLine());
    console.log(loadLine());
    console.log(codeLine());
    console.log(`healthz after opening: ${health}\n`);
    console.log('## Webhook in -> subscriber out');
    console.log(
      `${sent} events x ${hot.length} subscribers of one account, posted one after another, ` +
        `with ${opened + keys.length} other connections open; ${deliveries.length} deliveries in ${elapsed.toFixed(1)} s.\n`,
    );
    console.log(
      markdownTable(
        ['measure', 'p50 ms', 'p99 ms', 'max ms'],
        [
          ['webhook acknowledged (2xx)', ms(percentile(acks, 50)), ms(percentile(acks, 99)), ms(Math.max(...acks))],
          ['webhook in -> subscriber out', ms(percentile(deliveries, 50)), ms(percentile(deliveries, 99)), ms(Math.max(...deliveries))],
        ],
      ),
    );
    console.log('\n## Subscribers per instance');
    console.log(
      markdownTable(
        ['measure', 'value'],
        [
          ['connections opened (1 subscription each)', String(opened)],
          ['gateway RSS before -> after', `${(before.rss / MiB).toFixed(1)} -> ${(after.rss / MiB).toFixed(1)} MiB`],
          ['RSS per subscriber', `${(perSubRss / 1024).toFixed(1)} KiB`],
          ['heap+external per subscriber', `${(perSubHeap / 1024).toFixed(1)} KiB`],
          [`subscribers within a ${s.budgetMiB} MiB budget (baseline RSS included)`, Number.isFinite(fits) ? `~${fits.toLocaleString('en-US')}` : '-'],
        ],
      ),
    );
    console.log(
      `\nA stalled subscriber adds at most SUBSCRIPTION_QUEUE_LIMIT (${config.subscriptionQueueLimit}) queued events per subscription ` +
        `plus SUBSCRIPTION_MAX_BUFFERED_BYTES (${config.subscriptionMaxBufferedBytes / MiB} MiB) of unsent socket data before it is closed with 4429; ` +
        'the budget above is for subscribers that keep up.',
    );
  } finally {
    http.close();
    await Promise.all(subscribers.map((sub) => sub.client.dispose()));
    await gateway.stop();
    await emulator.stop();
    await redis?.stop();
  }
}

export const realtimeBench: Bench = {
  name: 'realtime',
  summary: 'webhook-in to subscriber-out latency (p50/p99) and subscribers per instance within a memory budget',
  usage: [
    '--connections N   idle subscriber connections opened for the capacity figure (default 2000)',
    '--subscribers S   subscribers of the account the latency events go to (default 200)',
    '--events E        webhooks posted one after another (default 200)',
    '--accounts A      accounts the idle connections are spread over (default 20)',
    '--budget-mib M    memory budget for the gateway process, RSS (default 512)',
    '--redis           run the gateway with a Redis bus (starts redis-server from PATH)',
    '--time-cap SEC    stop opening connections / posting events after this long (default 90)',
  ],
  run: runBench,
};

if (process.env[CHILD_FLAG] === '1') {
  gatewayChild().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
