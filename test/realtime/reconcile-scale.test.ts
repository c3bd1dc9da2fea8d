/**
 * Reconciliation shared across instances: two gateway processes over one
 * redis-server and one emulator whose webhooks go nowhere. 200 subscribers
 * of one pending transaction cost one upstream re-read per interval, made
 * by the instance holding the object's lease; when that instance is killed,
 * the other takes the lease over and its subscribers still see the approval.
 * With webhooks working (to one instance), re-reads and webhooks together
 * still give each subscriber on either instance each state once.
 */
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { gatewayReady, spawnMain, type GatewayProcess } from './processes.js';
import { eventually, liveSubscriptions, setUpstreamStatus, subscribe, upstreamReads, wsClient, type Health, type Subscription } from './support.js';

interface TransactionUpdated {
  transactionUpdated: { id: string; status: string };
}
const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status } }`;
/** A fixed interval (no backoff, no jitter), so "reads per interval" is a plain count over time. */
const INTERVAL_MS = 300;
const PER_INSTANCE = 100;
const PER_CONNECTION = 25;

interface Instance {
  process: GatewayProcess;
  wsUrl: string;
  health(): Promise<Health>;
}

describeWith('redis-server', 'reconciliation across two gateway processes sharing redis, webhooks lost', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  let instances: Instance[];
  const clients: Client[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    // No forwardTo: the upstream's webhooks reach no gateway.
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: emulator.url,
      WEBHOOK_SECRETS: 'whsec_unused_here',
      LOG_LEVEL: 'info',
      RECONCILE_INITIAL_MS: String(INTERVAL_MS),
      RECONCILE_MAX_MS: String(INTERVAL_MS),
      RECONCILE_JITTER: '0',
      WS_MAX_SUBSCRIPTIONS_PER_KEY: '1000',
      WS_SUBSCRIBE_PER_MINUTE: '10000',
    };
    const start = async (): Promise<Instance> => {
      const process = await spawnMain(env, gatewayReady);
      const base = `http://127.0.0.1:${process.found.port}`;
      return {
        process,
        wsUrl: `ws://127.0.0.1:${process.found.port}/graphql`,
        health: async () => (await (await fetch(`${base}/healthz`)).json()) as Health,
      };
    };
    instances = await Promise.all([start(), start()]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await Promise.all((instances ?? []).map((i) => i.process.stop()));
    await emulator?.stop();
    await redis?.stop();
  });

  it('re-reads once per interval for 200 subscribers, and moves the re-reads to the survivor when the owner dies', async () => {
    const key = newKey('shared');
    const transaction = await factories(emulator, key).transaction();
    const subs = new Map<Instance, Subscription<TransactionUpdated>[]>();
    for (const instance of instances) {
      const list: Subscription<TransactionUpdated>[] = [];
      for (let c = 0; c < PER_INSTANCE / PER_CONNECTION; c += 1) {
        const { client, connected } = wsClient(instance.wsUrl, key);
        clients.push(client);
        await connected;
        for (let s = 0; s < PER_CONNECTION; s += 1) list.push(subscribe(client, TRANSACTION_UPDATED, { id: String(transaction.id) }));
      }
      subs.set(instance, list);
    }
    for (const instance of instances) await eventually(() => liveSubscriptions(instance.wsUrl), (n) => n === PER_INSTANCE, 20_000);
    const all = [...subs.values()].flat();
    await eventually(async () => all.filter((s) => s.values.length > 0).length, (n) => n === 2 * PER_INSTANCE, 10_000);
    expect(new Set(all.map((s) => s.values[0]!.transactionUpdated.status))).toEqual(new Set(['PENDING']));

    // Steady state: count the upstream's reads of the object while ten re-reads happen.
    const owners = async () => (await Promise.all(instances.map((i) => i.health()))).map((h) => h.reconcile);
    await eventually(owners, (r) => r.filter((x) => x.owned === 1).length === 1 && r.every((x) => x.watched === 1), 5000);
    emulator.resetStats();
    const startedAt = Date.now();
    const before = await owners();
    const after = await eventually(owners, (r) => r.reduce((n, x) => n + x.reads, 0) >= before.reduce((n, x) => n + x.reads, 0) + 10, 10_000);
    const elapsed = Date.now() - startedAt;
    const reads = upstreamReads(emulator, 'transactions');
    // One read per interval in all (plus the one in flight at each end), never one per subscriber or per instance.
    expect(reads).toBeGreaterThanOrEqual(10);
    expect(reads).toBeLessThanOrEqual(Math.floor(elapsed / INTERVAL_MS) + 2);
    const ownerIndex = after.findIndex((x) => x.owned === 1);
    const other = 1 - ownerIndex;
    expect(after[other]!.reads).toBe(before[other]!.reads);

    // Kill the owner without a goodbye: its lease is left to expire.
    const owner = instances[ownerIndex]!;
    const survivor = instances[other]!;
    const died = new Promise((r) => owner.process.child.once('exit', r));
    owner.process.child.kill('SIGKILL');
    await died;
    const readsBefore = (await survivor.health()).reconcile.reads;
    await setUpstreamStatus(emulator.url, 'transactions', transaction.id, 'approved');
    const survivors = subs.get(survivor)!;
    await eventually(async () => survivors.filter((s) => s.values.some((v) => v.transactionUpdated.status === 'APPROVED')).length, (n) => n === PER_INSTANCE, 10_000);
    const health = await survivor.health();
    expect(health.reconcile).toMatchObject({ owned: 1 });
    expect(health.reconcile.reads).toBeGreaterThan(readsBefore);
    for (const s of survivors) expect(s.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED']);
  }, 60_000);
});

describeWith('redis-server', 'reconciliation next to working webhooks, two processes sharing redis', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  let instances: Instance[];
  const clients: Client[] = [];
  const SECRET = 'whsec_reconcile_and_webhooks';

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await startEmulator({ port: 0, settleMs: 50, webhookRetryBaseMs: 20 });
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: emulator.url,
      WEBHOOK_SECRETS: SECRET,
      LOG_LEVEL: 'info',
      RECONCILE_INITIAL_MS: '100',
      RECONCILE_MAX_MS: '300',
    };
    instances = await Promise.all(
      [0, 1].map(async () => {
        const process = await spawnMain(env, gatewayReady);
        const base = `http://127.0.0.1:${process.found.port}`;
        return { process, wsUrl: `ws://127.0.0.1:${process.found.port}/graphql`, health: async () => (await (await fetch(`${base}/healthz`)).json()) as Health };
      }),
    );
    // Webhooks reach the first instance only, as a load balancer would send them to one.
    emulator.forwardEventsTo(instances[0]!.wsUrl.replace(/^ws/, 'http').replace(/\/graphql$/, '/webhooks/payments'), SECRET);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await Promise.all((instances ?? []).map((i) => i.process.stop()));
    await emulator?.stop();
    await redis?.stop();
  });

  it('gives every subscriber on either instance one APPROVED, whether the webhook or a re-read brings it first', async () => {
    const key = newKey('both');
    const transaction = await factories(emulator, key).transaction();
    const subs: Subscription<TransactionUpdated>[] = [];
    for (const instance of instances) {
      const { client, connected } = wsClient(instance.wsUrl, key);
      clients.push(client);
      await connected;
      for (let s = 0; s < 5; s += 1) subs.push(subscribe(client, TRANSACTION_UPDATED, { id: String(transaction.id) }));
    }
    await eventually(async () => subs.every((s) => s.values.length === 1), Boolean, 10_000);
    await setUpstreamStatus(emulator.url, 'transactions', transaction.id, 'approved');
    await eventually(async () => subs.every((s) => s.values.length === 2), Boolean, 5000);
    // Let both sources have their say: the webhook delivered and several re-reads of the approved state.
    await eventually(async () => emulator.deliveries().some((d) => d.event_type === 'transaction.approved' && d.ok), Boolean, 5000);
    const reads = async () => (await Promise.all(instances.map((i) => i.health()))).reduce((n, h) => n + h.reconcile.reads, 0);
    const before = await reads();
    await eventually(reads, (n) => n >= before + 3, 10_000);
    for (const s of subs) expect(s.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED']);
  }, 60_000);
});
