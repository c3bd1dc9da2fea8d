/**
 * The event log under two gateway processes and a real redis-server with its
 * append-only file, reached through a TCP proxy: webhooks are signed to A and
 * redelivered until answered 2xx, as the upstream does; subscribers with and
 * without an id listen on B (and one without on A). A failed append answers
 * 503 and keeps nothing; Redis SIGKILLed and restarted from its file, or cut
 * off for longer than an append may wait: every approved event reaches every
 * subscriber once, none lost, none twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startInstances, type GatewayInstance } from './processes.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { eventually, liveSubscriptions, postWebhook, sleep, subscribe, transactionEvent, wsClient, type Subscription } from './support.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const SECRET = 'whsec_event_log_both_instances';
const BY_ID = `subscription ($id: ID) { transactionUpdated(id: $id) { id status } }`;
const EVENTS = `subscription { paymentEvent(types: ["transaction.approved"]) { id type objectId } }`;

type Updated = { transactionUpdated: { id: string; status: string } };
type Event = { paymentEvent: { id: string; type: string; objectId: string | null } };

interface Audience {
  /** One approval webhook per transaction, newer than its state at subscribe time. */
  approvals: string[];
  /** Per subscriber: how many times each transaction's approval reached it. */
  seen(): Record<string, Map<string, number>>;
  close(): Promise<void>;
}

interface Sent {
  approved: number;
  refused: number;
}

/** A count for one subscriber: approved, seen, lost, seen twice (or more). */
function tally(approved: string[], seen: Map<string, number>) {
  const ids = approved.map((body) => String((JSON.parse(body) as { object_id: number }).object_id));
  return {
    approved: ids.length,
    seen: ids.filter((id) => (seen.get(id) ?? 0) > 0).length,
    lost: ids.filter((id) => !seen.get(id)).length,
    twice: ids.filter((id) => (seen.get(id) ?? 0) > 1).length,
  };
}

describeWith('redis-server', 'the event log between two gateway processes, whatever Redis does', () => {
  let dir: string;
  let redis: RedisServer;
  let admin: Redis;
  let proxy: TcpProxy;
  let emulator: RunningEmulator;
  let a: GatewayInstance;
  let b: GatewayInstance;
  const redisArgs = () => ['--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', dir];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'event-log-'));
    redis = await startRedisServer(redisArgs());
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    proxy = await startTcpProxy(redis.port);
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    // Reconciliation off: what a subscriber sees comes from webhooks and the log alone. No entity cache, so a Redis
    // that refuses writes fails the append itself, not the eviction before it.
    const env = { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, PAYMENTS_API_URL: emulator.url, WEBHOOK_SECRETS: SECRET, LOG_LEVEL: 'info', RECONCILE_READS_PER_SECOND: '0', ENTITY_CACHE: 'false' };
    [a, b] = (await startInstances(env)) as [GatewayInstance, GatewayInstance];
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.process.stop(), b?.process.stop()]);
    admin?.disconnect();
    await proxy?.close();
    await emulator?.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function audience(count: number): Promise<Audience> {
    const key = newKey('event-log');
    const f = factories(emulator, key);
    const accounts = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
    const accountId = (accounts['v1/accounts'] ?? (accounts as unknown as { id: number }[]))[0]!.id;
    const transactions = await Promise.all(Array.from({ length: count }, () => f.transaction()));
    const later = new Date(Date.now() + 1000).toISOString();
    const approvals = transactions.map((t) => transactionEvent({ accountId, transaction: { ...t, status: 'approved', updated_at: later } }));

    const clients: { client: Client; url: string }[] = [];
    const open = async (instance: GatewayInstance) => {
      const { client, connected } = wsClient(instance.wsUrl, key);
      await connected;
      clients.push({ client, url: instance.wsUrl });
      return client;
    };
    const [onB, onA] = [await open(b), await open(a)];
    const [beforeB, beforeA] = [await liveSubscriptions(b.wsUrl), await liveSubscriptions(a.wsUrl)];
    const byId = transactions.map((t) => subscribe<Updated>(onB, BY_ID, { id: String(t.id) }));
    const anyOnB = subscribe<Updated>(onB, BY_ID);
    const eventsOnB = subscribe<Event>(onB, EVENTS);
    const anyOnA = subscribe<Updated>(onA, BY_ID);
    await eventually(() => liveSubscriptions(b.wsUrl), (n) => n >= beforeB + count + 2, 20_000);
    await eventually(() => liveSubscriptions(a.wsUrl), (n) => n >= beforeA + 1, 20_000);
    // Each subscription with an id has its current state first: it is listening.
    await Promise.all(byId.map((s) => s.nth(1, 20_000)));

    const approvedIn = (sub: Subscription<Updated>) => {
      const seen = new Map<string, number>();
      for (const v of sub.values) if (v.transactionUpdated.status === 'APPROVED') seen.set(v.transactionUpdated.id, (seen.get(v.transactionUpdated.id) ?? 0) + 1);
      return seen;
    };
    return {
      approvals,
      seen() {
        const withId = new Map<string, number>();
        for (const sub of byId) for (const [id, n] of approvedIn(sub)) withId.set(id, (withId.get(id) ?? 0) + n);
        const events = new Map<string, number>();
        for (const v of eventsOnB.values) if (v.paymentEvent.objectId) events.set(v.paymentEvent.objectId, (events.get(v.paymentEvent.objectId) ?? 0) + 1);
        return { 'B, with an id': withId, 'B, without an id': approvedIn(anyOnB), 'B, paymentEvent': events, 'A, without an id': approvedIn(anyOnA) };
      },
      async close() {
        await Promise.all(clients.map(({ client }) => client.dispose()));
      },
    };
  }

  /**
   * Posts each body to A until it is answered 2xx, a few at a time, as the upstream redelivers. Once a third are in,
   * the fault begins and every sender waits for that before its next post, so the fault falls mid-load whatever the
   * machine's load; it ends while they go on.
   */
  async function deliverAll(bodies: string[], fault: { begin(): Promise<void>; end(): Promise<void> }): Promise<Sent> {
    const sent: Sent = { approved: 0, refused: 0 };
    const queue = [...bodies];
    let begun: Promise<void> | null = null;
    let ended: Promise<void> | null = null;
    const deadline = Date.now() + 60_000;
    const sender = async () => {
      for (let body = queue.shift(); body !== undefined; body = queue.shift()) {
        for (;;) {
          if (Date.now() > deadline) throw new Error(`not delivered within 60 s: ${body}`);
          const answer = await Promise.race([postWebhook(a.port, body, { secret: SECRET }), sleep(5000).then(() => null)]).catch(() => null);
          if (answer && answer.status === 200) break;
          if (answer?.status === 503) sent.refused += 1;
          else if (answer) throw new Error(`webhook answered ${answer.status}: ${JSON.stringify(answer.json)}`);
          await sleep(100);
        }
        sent.approved += 1;
        if (sent.approved === Math.ceil(bodies.length / 3)) begun ??= fault.begin().then(() => void (ended = fault.end()));
        if (begun) await begun;
        await sleep(30);
      }
    };
    await Promise.all([sender(), sender(), sender()]);
    await begun;
    await ended;
    return sent;
  }

  /** Waits until every subscriber has every approval (or a deadline), then a moment for any second copy. */
  async function counted(people: Audience) {
    await eventually(async () => Object.values(people.seen()).map((seen) => tally(people.approvals, seen).seen), (seen) => seen.every((n) => n === people.approvals.length), 20_000).catch(() => undefined);
    await sleep(500);
    return Object.fromEntries(Object.entries(people.seen()).map(([who, seen]) => [who, tally(people.approvals, seen)]));
  }

  const everyone = (n: number) => ({
    'B, with an id': { approved: n, seen: n, lost: 0, twice: 0 },
    'B, without an id': { approved: n, seen: n, lost: 0, twice: 0 },
    'B, paymentEvent': { approved: n, seen: n, lost: 0, twice: 0 },
    'A, without an id': { approved: n, seen: n, lost: 0, twice: 0 },
  });

  /** A's JSON log lines whose message starts with `prefix`, from `since` (an output offset) on. */
  const linesOfA = (prefix: string, since: number) =>
    a.process
      .output()
      .slice(since)
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; refused?: number })
      .filter((line) => line.msg.startsWith(prefix));

  it('answers 503 to a webhook whose append fails and keeps nothing of it, so its redelivery is delivered, once, on both instances', async () => {
    const people = await audience(1);
    const [approval] = people.approvals as [string];
    // Redis refuses every write: the script's append fails before it records anything.
    await admin.config('SET', 'maxmemory', '1');
    try {
      expect((await postWebhook(a.port, approval, { secret: SECRET })).status).toBe(503);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    await sleep(300);
    expect(Object.values(people.seen()).map((seen) => seen.size)).toEqual([0, 0, 0, 0]);
    expect(await postWebhook(a.port, approval, { secret: SECRET })).toEqual({ status: 200, json: { received: true, duplicate: false } });
    expect(await counted(people)).toEqual(everyone(1));
    await people.close();
  }, 60_000);

  it('loses and doubles nothing when Redis is SIGKILLed mid-load and restarted from its append-only file', async () => {
    const people = await audience(30);
    const since = a.process.output().length;
    const sent = await deliverAll(people.approvals, {
      begin: () => redis.kill(),
      end: async () => {
        await sleep(500);
        redis = await startRedisServer(redisArgs(), redis.port);
      },
    });
    // The fault fell mid-load: deliveries were refused meanwhile, and redelivered.
    expect(sent).toEqual({ approved: 30, refused: expect.any(Number) });
    expect(sent.refused).toBeGreaterThan(0);
    expect(await counted(people)).toEqual(everyone(30));
    // Refusals are counted, not logged one by one: each outage has one error line and one line with its count.
    const started = linesOfA('webhook not recorded', since);
    const ended = linesOfA('webhook intake recovered', since);
    expect(started.length).toBe(ended.length);
    expect(ended.reduce((n, line) => n + (line.refused ?? 0), 0)).toBe(sent.refused);
    if (sent.refused > 0) expect(started.length).toBeLessThan(Math.max(2, sent.refused));
    // Restarted from its file, the log has every entry and sequence number: no gap, no start over.
    expect(linesOfA('event log', since)).toEqual([]);
    await people.close();
  }, 120_000);

  it('loses and doubles nothing when Redis is cut off for longer than an append waits, then reachable again', async () => {
    const people = await audience(30);
    const sent = await deliverAll(people.approvals, {
      begin: async () => proxy.stall(),
      end: async () => {
        // Past the appending connection's 2 s command timeout: appends answered 503 may still run when bytes flow again.
        await sleep(3000);
        proxy.resume();
      },
    });
    expect(sent).toEqual({ approved: 30, refused: expect.any(Number) });
    expect(sent.refused).toBeGreaterThan(0);
    expect(await counted(people)).toEqual(everyone(30));
    await people.close();
  }, 120_000);
});
