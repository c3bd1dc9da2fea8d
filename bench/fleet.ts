/**
 * Fleet bench: three gateway processes over a Redis Cluster (three masters, three replicas) and over one Redis, side
 * by side in one run. Signed webhooks go to gateway 0, which holds no subscriber; account-wide subscribers of half
 * the accounts sit on gateways 1 and 2, the other half have none. Measured per topology: webhook to subscriber
 * latency (post sent to event received, across instances), what each gateway's event log reader processed against
 * the subscribers it holds (from its /metrics), and keyed payments per second (createPayout with an idempotency
 * key, alternately on gateways 1 and 2). Needs redis-server and redis-cli on PATH.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startEmulator } from '../emulator/index.js';
import { partitionOf } from '../src/realtime/log-keys.js';
import { factories } from '../test/support/factories.js';
import { newKey } from '../test/support/harness.js';
import { startRedisCluster } from '../test/support/redis-topologies.js';
import { startInstances, type GatewayInstance } from '../test/realtime/processes.js';
import { startRedisServer } from '../test/realtime/redis-server.js';
import { eventually, liveSubscriptions, postWebhook, sleep, transactionEvent, wsClient } from '../test/realtime/support.js';
import { CREATE_PAYOUT, payoutInput, post } from '../test/resilience/support.js';
import { codeLine, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const OPTIONS = { accounts: { type: 'string', default: '8' }, events: { type: 'string', default: '400' }, payments: { type: 'string', default: '120' }, concurrency: { type: 'string', default: '8' } } as const;
const SECRET = 'whsec_fleet_bench_shared_by_every_instance';
const EVENTS = 'subscription { paymentEvent { id } }';

interface Settings {
  accounts: number;
  events: number;
  payments: number;
  concurrency: number;
}

interface GatewayFigures {
  subscribers: number;
  accounts: number;
  partitions: number;
  read: number;
  delivered: number;
  skipped: number;
}

interface Figures {
  topology: string;
  latencies: number[];
  missing: number;
  perGateway: GatewayFigures[];
  paymentsPerSecond: number;
  refusedPayments: number;
  refusedCodes: string;
}

/** Runs `count` tasks, `concurrency` at a time. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await task(next++);
  }));
}

const metric = (text: string, name: string): number =>
  text.split('\n').filter((line) => line.startsWith(name)).reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

async function runFleet(topology: string, redisEnv: Record<string, string>, settings: Settings): Promise<Figures> {
  const emulator = await startEmulator({ port: 0, settleMs: 60_000 });
  // Info: the start line says where each listens.
  const env = { ...redisEnv, PAYMENTS_API_URL: emulator.url, WEBHOOK_SECRETS: SECRET, LOG_LEVEL: 'info', RECONCILE_READS_PER_SECOND: '0', RATE_LIMIT_PER_MINUTE: '0' };
  const started = await Promise.allSettled([0, 1, 2].map(() => startInstances(env, 1)));
  const gateways = started.flatMap((s) => (s.status === 'fulfilled' ? s.value : []));
  const clients: { dispose(): unknown }[] = [];
  try {
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [hub, ...holders] = gateways as [GatewayInstance, GatewayInstance, GatewayInstance];
    const accounts: { key: string; accountId: number; transaction: Record<string, unknown> & { id: number }; holder: number | null }[] = [];
    const received = new Map<number, number>();
    const perHolder = holders.map(() => ({ subscribers: 0, accounts: new Set<number>() }));
    for (let i = 0; i < settings.accounts; i += 1) {
      const key = newKey(`fleet${i}`);
      const f = factories(emulator, key);
      const listed = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
      const accountId = (listed['v1/accounts'] ?? (listed as unknown as { id: number }[]))[0]!.id;
      const transaction = await f.transaction({ description: `fleet ${i}` });
      // Half the accounts have a subscriber, on gateway 1 or 2; the others none anywhere.
      const holder = i % 2 === 0 ? (i / 2) % 2 : null;
      accounts.push({ key, accountId, transaction, holder });
      if (holder === null) continue;
      const on = holders[holder]!;
      const { client, connected } = wsClient(on.wsUrl, key);
      await connected;
      clients.push(client);
      // Timestamped as each event lands; held once the gateway counts it.
      const before = await liveSubscriptions(on.wsUrl);
      client.subscribe<{ paymentEvent: { id: string } }>({ query: EVENTS }, { next: (result) => void received.set(Number(result.data?.paymentEvent.id), performance.now()), error: () => undefined, complete: () => undefined });
      await eventually(() => liveSubscriptions(on.wsUrl), (n) => n > before, 5000);
      perHolder[holder]!.subscribers += 1;
      perHolder[holder]!.accounts.add(accountId);
    }

    // Webhooks to gateway 0, round robin over every account.
    const sentAt = new Map<number, number>();
    const watchedIds: number[] = [];
    let nextEvent = 7_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1000;
    await pool(settings.events, settings.concurrency, async (i) => {
      const account = accounts[i % accounts.length]!;
      const eventId = (nextEvent += 1);
      const body = transactionEvent({ accountId: account.accountId, eventId, transaction: { ...account.transaction, status: 'approved', updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() } });
      if (account.holder !== null) watchedIds.push(eventId);
      sentAt.set(eventId, performance.now());
      const answer = await postWebhook(hub.port, body, { secret: SECRET });
      if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
    });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && watchedIds.some((id) => !received.has(id))) await sleep(50);
    const latencies = watchedIds.filter((id) => received.has(id)).map((id) => received.get(id)! - sentAt.get(id)!);

    const perGateway: GatewayFigures[] = [];
    for (const [g, gateway] of gateways.entries()) {
      const text = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
      const held = g === 0 ? { subscribers: 0, accounts: new Set<number>() } : perHolder[g - 1]!;
      perGateway.push({
        subscribers: held.subscribers,
        accounts: new Set([...held.accounts].map((a) => partitionOf(a))).size,
        partitions: metric(text, 'gateway_event_log_partitions_read'),
        read: metric(text, 'gateway_event_log_events_read_total'),
        delivered: metric(text, 'gateway_event_log_events_delivered_total'),
        skipped: metric(text, 'gateway_event_log_events_skipped_total'),
      });
    }

    // Keyed payments: each with its own idempotency key, alternately on gateways 1 and 2.
    const refused = { count: 0, codes: new Map<string, number>() };
    const began = performance.now();
    await pool(settings.payments, settings.concurrency, async (i) => {
      const account = accounts[i % accounts.length]!;
      const reference = `fleet-bench-${topology.replace(/\W/g, '')}-${i}-${Date.now()}`;
      const answer = await post<{ createPayout: { payout: { id: string } | null } }>(`http://127.0.0.1:${holders[i % 2]!.port}/graphql`, CREATE_PAYOUT, { input: payoutInput(1000, reference), key: `pay-${reference}` }, account.key);
      if (answer.data?.createPayout?.payout?.id) return;
      refused.count += 1;
      const code = String((answer as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code ?? answer.status);
      refused.codes.set(code, (refused.codes.get(code) ?? 0) + 1);
    });
    const paymentsPerSecond = settings.payments / ((performance.now() - began) / 1000);
    return { topology, latencies, missing: watchedIds.length - latencies.length, perGateway, paymentsPerSecond, refusedPayments: refused.count, refusedCodes: [...refused.codes].map(([c, n]) => `${c} ${n}`).join(', ') };
  } finally {
    for (const client of clients) client.dispose();
    await Promise.all(gateways.map((g) => g.process.stop()));
    await emulator.stop();
  }
}

async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const settings: Settings = { accounts: Number(values.accounts), events: Number(values.events), payments: Number(values.payments), concurrency: Number(values.concurrency) };
  for (const [name, value] of Object.entries(settings)) if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number >= 1`);

  const results: Figures[] = [];
  const cluster = await startRedisCluster();
  try {
    results.push(await runFleet('cluster 3+3', { REDIS_CLUSTER_NODES: cluster.seeds }, settings));
  } finally {
    await cluster.stop();
  }
  const one = await startRedisServer();
  try {
    results.push(await runFleet('one Redis', { REDIS_URL: one.url }, settings));
  } finally {
    await one.stop();
  }

  console.log(`${machineLine()}\n${loadLine()}\n${codeLine()}\n`);
  console.log(`${settings.accounts} accounts (half with one account-wide subscriber, on gateway 1 or 2), ${settings.events} webhooks to gateway 0, ${settings.payments} keyed payouts, ${settings.concurrency} at a time\n`);
  console.log(
    markdownTable(
      ['Redis', 'webhook → subscriber p50 / p99', 'not received', 'keyed payouts/s (refused)'],
      results.map((r) => [r.topology, `${ms(percentile(r.latencies, 50))} / ${ms(percentile(r.latencies, 99))} ms`, String(r.missing), `${r.paymentsPerSecond.toFixed(0)} (${r.refusedPayments}${r.refusedCodes ? `: ${r.refusedCodes}` : ''})`]),
    ),
  );
  console.log();
  console.log(
    markdownTable(
      ['Redis', 'gateway', 'subscribers (their partitions)', 'partitions read', 'entries read', 'delivered', 'skipped'],
      results.flatMap((r) => r.perGateway.map((g, i) => [r.topology, String(i), `${g.subscribers} (${g.accounts})`, String(g.partitions), String(g.read), String(g.delivered), String(g.skipped)])),
    ),
  );
}

export const fleetBench: Bench = {
  name: 'fleet',
  summary: 'three gateways over a Redis Cluster (3+3) and over one Redis: webhook to subscriber latency, what each reader processed, keyed payments/s',
  usage: ['--accounts <n>     accounts, half of them subscribed (8)', '--events <n>       webhooks posted to gateway 0 (400)', '--payments <n>     keyed payouts (120)', '--concurrency <n>  requests at a time (8)'],
  run,
};
