/**
 * The Redis event log between two instances on one real redis-server: each
 * append reaches the appending instance's listeners at once and the other's
 * through its reader, once each; the ledger's verdicts travel with the entry;
 * every key one append touches carries its partition's hash tag; and an
 * instance whose link stalled while the log was trimmed past it says so.
 */
import { singleServer } from '../../../src/redis-target.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { RedisLinks } from '../../../src/redis.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { logKeys, partitionOf } from '../../../src/realtime/log-keys.js';
import { encode } from '../../../src/upstream/codec.js';
import { redisEventLog, type RedisEventLog } from '../../../src/realtime/redis-log.js';
import { describeWith } from '../../support/tools.js';
import { eventually, sleep } from '../../realtime/support.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { startTcpProxy } from '../../realtime/tcp-proxy.js';

const ACCOUNT = 37;
const logger = createLogger('silent');

const webhook = (id: number, objectId: number, status: string, at: string): Omit<PaymentEvent, 'current'> => ({
  id,
  type: `transaction.${status}`,
  object: 'transaction',
  objectId,
  accountId: ACCOUNT,
  entity: { id: objectId, status, updated_at: at },
  createdAt: at,
});

describeWith('redis-server', 'the Redis event log, two instances', () => {
  const client = redisClientsForSuite();
  const prefix = `redis-log-${Date.now()}:`;
  let here: RedisEventLog;
  let there: RedisEventLog;
  const got = { here: [] as PaymentEvent[], there: [] as PaymentEvent[] };

  beforeAll(async () => {
    const url = `redis://127.0.0.1:${client().options.port}`;
    const open = () => redisEventLog({ target: singleServer(url), prefix, logger, links: new RedisLinks(logger), maxEvents: 1000 });
    [here, there] = await Promise.all([open(), open()]);
    here.subscribe(ACCOUNT, (e) => got.here.push(e));
    there.subscribe(ACCOUNT, (e) => got.there.push(e));
  });
  afterAll(async () => {
    await Promise.all([here?.close(), there?.close()]);
  });

  const statuses = (events: PaymentEvent[], objectId: number) => events.filter((e) => e.objectId === objectId).map((e) => [e.entity?.status, e.current]);

  it('hands an append to its own instance before it returns, and to the other through the log, once each', async () => {
    expect(await here.append(webhook(1, 100, 'pending', '2026-01-01T10:00:00.000Z'))).toBe('accepted');
    expect(statuses(got.here, 100)).toEqual([['pending', true]]);
    expect(await here.append(webhook(1, 100, 'pending', '2026-01-01T10:00:00.000Z'))).toBe('duplicate');
    expect(await there.append(webhook(1, 100, 'pending', '2026-01-01T10:00:00.000Z'))).toBe('duplicate');
    // Each instance reads the other's entry before it appends the next: an own append goes out at once, so one
    // appended before the reader came by would arrive ahead of the older entry (that order has its own test below).
    await eventually(async () => statuses(got.there, 100).length, (n) => n === 1);
    expect(await there.append(webhook(3, 100, 'approved', '2026-01-01T10:00:05.000Z'))).toBe('accepted');
    await eventually(async () => statuses(got.here, 100).length, (n) => n === 2);
    expect(await here.append(webhook(2, 100, 'pending', '2026-01-01T09:59:00.000Z'))).toBe('out_of_order');
    const expected = [
      ['pending', true],
      ['approved', true],
      ['pending', false],
    ];
    await eventually(async () => [got.here.length, got.there.length], ([h, t]) => h! >= 3 && t! >= 3);
    // Long enough for a second copy from a reader to show.
    await sleep(300);
    expect(statuses(got.here, 100)).toEqual(expected);
    expect(statuses(got.there, 100)).toEqual(expected);
  });

  it('keeps a re-read snapshot only when it is news, ordered with the webhooks of its object', async () => {
    const snapshot = (at: string, status: string): PaymentEvent => ({ ...webhook(0, 200, status, at), current: true, origin: 'snapshot' });
    expect(await here.appendSnapshot(snapshot('2026-01-01T10:00:00.000Z', 'pending'), Date.parse('2026-01-01T10:00:00.000Z'))).toBe(true);
    expect(await there.appendSnapshot(snapshot('2026-01-01T10:00:00.000Z', 'pending'), Date.parse('2026-01-01T10:00:00.000Z'))).toBe(false);
    // Read there before its own append goes out at once (as in the first test).
    await eventually(async () => statuses(got.there, 200).length, (n) => n === 1);
    // The webhook of the state the snapshot brought: an event, not a state change.
    expect(await there.append(webhook(20, 200, 'pending', '2026-01-01T10:00:00.000Z'))).toBe('out_of_order');
    expect(await there.appendSnapshot(snapshot('2026-01-01T10:00:09.000Z', 'approved'), Date.parse('2026-01-01T10:00:09.000Z'))).toBe(true);
    await eventually(async () => [statuses(got.here, 200).length, statuses(got.there, 200).length], ([h, t]) => h === 3 && t === 3);
    await sleep(300);
    for (const events of [got.here, got.there])
      expect(statuses(events, 200)).toEqual([
        ['pending', true],
        ['pending', false],
        ['approved', true],
      ]);
  });

  it('delivers an entry that reaches the reader after a newer state of its object as no state change', async () => {
    expect(await here.append(webhook(40, 300, 'approved', '2026-01-01T10:00:05.000Z'))).toBe('accepted');
    // Another instance's older state, appended when it was current, read here only after the newer one went out.
    const older = webhook(39, 300, 'pending', '2026-01-01T10:00:00.000Z');
    const keys = logKeys(prefix);
    const seq = Number(await client().get(keys.sequence(partitionOf(ACCOUNT)))) + 1;
    await client().xadd(keys.stream(partitionOf(ACCOUNT)), '*', 'c', '1', 's', seq, 'e', encode(older));
    await client().set(keys.sequence(partitionOf(ACCOUNT)), seq);
    await eventually(async () => [statuses(got.here, 300).length, statuses(got.there, 300).length], ([h, t]) => h === 2 && t === 2);
    for (const events of [got.here, got.there])
      expect(statuses(events, 300)).toEqual([
        ['approved', true],
        ['pending', false],
      ]);
  });

  it('gives every key an append touches its partition hash tag, so one script stays on one Cluster node', async () => {
    const keys = (await client().keys(`${prefix}*`)).filter((k) => k.includes(`:${ACCOUNT}:`) || k.endsWith(':log'));
    const tags = new Set(keys.map((k) => /\{[^}]*\}/.exec(k)?.[0]));
    expect(keys.length).toBeGreaterThan(3);
    expect([...tags]).toEqual([`{events:${partitionOf(ACCOUNT)}}`]);
    // Only what something reads: the stream, the event ids taken and each object's last version.
    const kinds = new Set(keys.map((k) => k.slice(k.indexOf('}:') + 2).split(':')[0]));
    expect([...kinds].sort()).toEqual(['event', 'last', 'log']);
  });

  it('logs one error line when a stalled link comes back behind what the log still keeps, and goes on from what it keeps', async () => {
    const other = 38;
    const port = client().options.port!;
    const proxy = await startTcpProxy(port);
    const lines: string[] = [];
    const behindLogger = createLogger('info', { destination: { write: (line: string) => void lines.push(line) } });
    const behind = await redisEventLog({ target: singleServer(`redis://127.0.0.1:${proxy.port}`), prefix, logger: behindLogger, links: new RedisLinks(behindLogger), maxEvents: 1000 });
    const received: PaymentEvent[] = [];
    behind.subscribe(other, (e) => received.push(e));
    try {
      // Stalled while it reads the partition: a partition it had not started reading has no position to fall behind.
      await behind.whenReading(other);
      proxy.stall();
      // 1000 over 16 partitions keeps about 63 a stream: 400 appended while it cannot read.
      for (let i = 0; i < 400; i += 1) await here.append({ ...webhook(5000 + i, 5000 + i, 'approved', '2026-01-01T10:00:00.000Z'), accountId: other });
      // The entries' messages wait in the stalled link too; Redis drops a subscriber that far behind (its pub/sub
      // output limit), and with it what it had not sent: only the stream's read is left.
      await client().client('KILL', 'TYPE', 'pubsub');
      await sleep(1500);
      proxy.resume();
      const trimmed = await eventually(async () => lines.filter((l) => l.includes('event log trimmed past this instance')), (found) => found.length > 0, 5000);
      expect(trimmed).toHaveLength(1);
      const [line] = trimmed.map((l) => JSON.parse(l) as { level: number; partition: number; lost: number });
      expect(line).toMatchObject({ level: 50, partition: partitionOf(other) });
      // Counted exactly: what it received and what it lost make the 400.
      await eventually(async () => received.length, (n) => n > 0 && received.at(-1)!.id === 5399, 5000);
      expect(received.length + line!.lost).toBe(400);
      await eventually(async () => received.length, (n) => n > 0 && received.at(-1)!.id === 5399, 5000);
      expect(received.length).toBeLessThan(400);
    } finally {
      await behind.close();
      await proxy.close();
    }
  });
});
