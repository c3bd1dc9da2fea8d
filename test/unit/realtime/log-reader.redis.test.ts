/**
 * The event log's reader on one real redis-server: an instance reads only the partitions its listeners' accounts
 * fall in (none of another account's entries reach it, a metric says so), a partition first needed is read from
 * before its first listener arrived and not from the whole log, and entries come in their append's message unless
 * one is missed. Then the same reading on a real Redis Cluster (three masters, three replicas), where the 16
 * streams sit on different nodes and the messages are sharded.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { logKeys, partitionOf } from '../../../src/realtime/log-keys.js';
import { redisEventLog, type RedisEventLog } from '../../../src/realtime/redis-log.js';
import { RedisLinks } from '../../../src/redis.js';
import { redisTarget, singleServer } from '../../../src/redis-target.js';
import { encode } from '../../../src/upstream/codec.js';
import { startRedisCluster, type RedisClusterHandle } from '../../support/redis-topologies.js';
import { describeWith } from '../../support/tools.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { eventually, sleep } from '../../realtime/support.js';

const logger = createLogger('silent');

let nextId = 1;
const webhook = (accountId: number): Omit<PaymentEvent, 'current'> => {
  const id = nextId++;
  const at = new Date(Date.UTC(2026, 0, 1, 10, 0, id)).toISOString();
  return { id, type: 'transaction.approved', object: 'transaction', objectId: 1000 + id, accountId, entity: { id: 1000 + id, status: 'approved', updated_at: at }, createdAt: at };
};

describeWith('redis-server', 'the event log reader, per partition', () => {
  const client = redisClientsForSuite();
  const prefix = `log-reader-${Date.now()}:`;
  let appender: RedisEventLog;
  let listener: RedisEventLog;

  beforeAll(async () => {
    const url = `redis://127.0.0.1:${client().options.port}`;
    const open = () => redisEventLog({ target: singleServer(url), prefix, logger, links: new RedisLinks(logger), maxEvents: 10_000 });
    [appender, listener] = await Promise.all([open(), open()]);
  });
  afterAll(async () => {
    await Promise.all([appender?.close(), listener?.close()]);
  });

  it('reads none of the entries of a partition none of its listeners needs, and the metrics show it', async () => {
    const watched = 1;
    const neighbour = 1 + 16; // the same partition as `watched`, no listener of its own
    const unwatched = 2;
    const got: PaymentEvent[] = [];
    const stop = listener.subscribe(watched, (e) => got.push(e));
    try {
      await listener.whenReading(watched);
      for (let i = 0; i < 5; i += 1) await appender.append(webhook(watched));
      for (let i = 0; i < 3; i += 1) await appender.append(webhook(neighbour));
      for (let i = 0; i < 40; i += 1) await appender.append(webhook(unwatched));
      await eventually(async () => got.length, (n) => n === 5);
      // Past a safety re-read, which would have found any entry left behind.
      await sleep(1300);
      const stats = listener.stats();
      expect(got.map((e) => e.accountId)).toEqual([1, 1, 1, 1, 1]);
      expect(stats.partitions).toBe(1);
      expect(stats.read).toEqual({ [partitionOf(watched)]: 8 });
      expect(stats.delivered).toEqual({ read: 5, own: 0 });
      expect(stats.skipped).toEqual({ own: 0, no_listener: 3 });

      const metrics = new GatewayMetrics({ defaultMetrics: false });
      metrics.readFrom({ routes: () => ({}), websocket: () => ({ connections: 0, subscriptions: 0 }), eventLog: () => listener.stats() });
      const text = await metrics.text();
      expect(text).toContain(`gateway_event_log_events_read_total{partition="${partitionOf(watched)}"} 8`);
      expect(text).not.toContain(`gateway_event_log_events_read_total{partition="${partitionOf(unwatched)}"}`);
      expect(text).toContain('gateway_event_log_events_delivered_total{source="read"} 5');
      expect(text).toContain('gateway_event_log_events_skipped_total{reason="no_listener"} 3');
      expect(text).toContain('gateway_event_log_partitions_read 1');
      // The appender read nothing: nobody listens there.
      expect(appender.stats()).toMatchObject({ read: {}, partitions: 0, delivered: { read: 0, own: 0 } });
    } finally {
      stop();
    }
    expect(listener.stats().partitions).toBe(0);
  });

  it('reads a partition first needed from before its first listener arrived: an entry appended at once is not lost, one from long before is not replayed', async () => {
    const account = 3;
    const before = await appender.append(webhook(account));
    expect(before).toBe('accepted');
    // Longer than the start's margin: this one is history to a listener that arrives now.
    await sleep(1500);
    const got: PaymentEvent[] = [];
    const stop = listener.subscribe(account, (e) => got.push(e));
    try {
      // In the same turn as the subscription: before the reader has asked Redis anything.
      const sent = webhook(account);
      await appender.append(sent);
      await eventually(async () => got.length, (n) => n >= 1);
      await sleep(1300);
      expect(got.map((e) => e.id)).toEqual([sent.id]);
    } finally {
      stop();
    }
  });

  it('takes each entry from its append\'s message, and reads the stream for one whose message never came', async () => {
    const account = 4;
    const got: PaymentEvent[] = [];
    const stop = listener.subscribe(account, (e) => got.push(e));
    try {
      await listener.whenReading(account);
      const from = listener.stats().via;
      for (let i = 0; i < 3; i += 1) await appender.append(webhook(account));
      await eventually(async () => got.length, (n) => n === 3);
      expect(listener.stats().via).toEqual({ pushed: from.pushed + 3, fetched: from.fetched });
      // An entry with no message (an instance of a version before the messages): the safety re-read finds it.
      const keys = logKeys(prefix);
      const p = partitionOf(account);
      const seq = Number(await client().get(keys.sequence(p))) + 1;
      const silent = webhook(account);
      await client().xadd(keys.stream(p), '*', 'c', '1', 's', seq, 'e', encode(silent));
      await client().set(keys.sequence(p), seq);
      await eventually(async () => got.length, (n) => n === 4, 3000);
      expect(got.at(-1)!.id).toBe(silent.id);
      // And the next message, one past the last taken again, is taken as it comes.
      await appender.append(webhook(account));
      await eventually(async () => got.length, (n) => n === 5);
      expect(listener.stats().via).toEqual({ pushed: from.pushed + 4, fetched: from.fetched + 1 });
    } finally {
      stop();
    }
  });
});

describeWith('redis-server', 'the event log reader on a Redis Cluster', () => {
  describeWith('redis-cli', 'three masters, three replicas', () => {
    let cluster: RedisClusterHandle;
    let appender: RedisEventLog;
    let listener: RedisEventLog;

    beforeAll(async () => {
      cluster = await startRedisCluster();
      const target = redisTarget({ REDIS_CLUSTER_NODES: cluster.seeds })!;
      const open = () => redisEventLog({ target, prefix: 'log-reader-cluster:', logger, links: new RedisLinks(logger), maxEvents: 10_000 });
      [appender, listener] = await Promise.all([open(), open()]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all([appender?.close(), listener?.close()]);
      await cluster?.stop();
    }, 30_000);

    it('reads only its listeners\' partitions, each from its own node, every entry from its sharded message', async () => {
      const watched = [1, 6];
      const got: PaymentEvent[] = [];
      const stops = watched.map((account) => listener.subscribe(account, (e) => got.push(e)));
      try {
        await Promise.all(watched.map((account) => listener.whenReading(account)));
        // Their streams' slots are on two different masters.
        const keys = logKeys('log-reader-cluster:');
        expect(new Set(await Promise.all(watched.map((a) => cluster.masterOf(keys.stream(partitionOf(a)))))).size).toBe(2);
        for (let i = 0; i < 20; i += 1) await appender.append(webhook([1, 6, 2, 9][i % 4]!));
        await eventually(async () => got.length, (n) => n === 10, 5000);
        await sleep(1300);
        const stats = listener.stats();
        expect(stats.partitions).toBe(2);
        expect(stats.read).toEqual({ [partitionOf(1)]: 5, [partitionOf(6)]: 5 });
        expect(stats.via).toEqual({ pushed: 10, fetched: 0 });
        expect(appender.stats().read).toEqual({});
      } finally {
        for (const stop of stops) stop();
      }
    });
  });
});
