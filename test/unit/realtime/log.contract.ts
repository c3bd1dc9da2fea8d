/**
 * What every event log must do with its ledger, run over one instance's log (ledgerLog over the memory and the
 * disk ledger: log.test.ts) and the Redis event log production appends through (log.redis.test.ts, and the
 * webhook route over both in test/realtime/failed-delivery.test.ts): an event id is kept once per account, webhook
 * events and re-read snapshots of one object are ordered together, and an append that fails keeps nothing of it.
 */
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { memoryBus, type MemoryBus } from '../../../src/realtime/bus.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import type { DeliveryLedger } from '../../../src/realtime/ledger.js';
import { ledgerLog, type EventLog } from '../../../src/realtime/log.js';
import { RedisLinks } from '../../../src/redis.js';
import { singleServer } from '../../../src/redis-target.js';
import { redisEventLog } from '../../../src/realtime/redis-log.js';

export interface LogUnderTest {
  log: EventLog;
  /** What this instance's subscribers of `account` got, in order. */
  published: PaymentEvent[];
  /** The next append fails before anything is kept (a bus that refused, a Redis that did not answer). */
  failNextAppend(): void;
  close(): Promise<void>;
}

const logger = pino({ level: 'silent' });

/** One instance's log over `ledger`: a failed hand-over to its subscribers is the failed append. */
export function ledgerLogUnderTest(ledger: DeliveryLedger, account: number): LogUnderTest {
  const inner = memoryBus(logger);
  const published: PaymentEvent[] = [];
  inner.subscribe(account, (e) => published.push(e));
  let fails = false;
  const bus: Pick<MemoryBus, 'publish'> = {
    async publish(event) {
      if (fails) {
        fails = false;
        throw new Error('bus unreachable');
      }
      return inner.publish(event);
    },
  };
  return { log: ledgerLog(ledger, bus), published, failNextAppend: () => void (fails = true), close: () => inner.close() };
}

/** The Redis event log, its append script refused once by a Redis that did not answer. */
export async function redisLogUnderTest(url: string, prefix: string, account: number): Promise<LogUnderTest> {
  const log = await redisEventLog({ target: singleServer(url), prefix, logger, links: new RedisLinks(logger), maxEvents: 1000 });
  const published: PaymentEvent[] = [];
  log.subscribe(account, (e) => published.push(e));
  // Appends go out as a pipeline (the script, then WAIT for replicas where asked): the next one sent is refused.
  const writer = log.redis as unknown as { pipeline: (...args: unknown[]) => { exec: () => Promise<unknown> } };
  const pipeline = writer.pipeline.bind(writer);
  let fails = false;
  writer.pipeline = (...args) => {
    const queued = pipeline(...args);
    if (fails) {
      fails = false;
      queued.exec = () => Promise.reject(new Error('Redis did not answer'));
    }
    return queued;
  };
  return { log, published, failNextAppend: () => void (fails = true), close: () => log.close() };
}

const webhook = (accountId: number, id: number, objectId: number, status: string, ms: number): Omit<PaymentEvent, 'current'> => ({
  id,
  type: `transaction.${status}`,
  object: 'transaction',
  objectId,
  accountId,
  entity: { id: objectId, status, updated_at: new Date(ms).toISOString() },
  createdAt: new Date(ms).toISOString(),
});
const snapshot = (accountId: number, objectId: number, status: string, ms: number): PaymentEvent => ({ ...webhook(accountId, 0, objectId, status, ms), current: true, origin: 'snapshot' });

/** `account` and the other account used must be the ones `make` subscribed to, and fresh objects per call. */
export function logTests(make: () => Promise<LogUnderTest> | LogUnderTest, account: number): void {
  let objects = 0;
  const fresh = () => 5_000 + (objects += 1) * 10 + Math.floor(Math.random() * 1_000_000) * 1_000;
  const statuses = (t: LogUnderTest, objectId: number) => t.published.filter((e) => e.objectId === objectId).map((e) => [e.entity?.status, e.current]);

  it('keeps an event id once per account', async () => {
    const t = await make();
    const o = fresh();
    const results = [
      await t.log.append(webhook(account, o, o, 'pending', 1000)),
      await t.log.append(webhook(account, o, o, 'pending', 1000)),
      await t.log.append(webhook(account + 1, o, o, 'pending', 1000)),
      await t.log.append(webhook(account, o + 1, o, 'approved', 2000)),
    ];
    expect(results).toEqual(['accepted', 'duplicate', 'accepted', 'accepted']);
    await t.close();
  });

  it('orders re-read snapshots and webhook events of one object together', async () => {
    const t = await make();
    const o = fresh();
    const asNews = (r: string) => r === 'accepted';
    const steps: [string, boolean][] = [
      ['snapshot at 1000 (first sight)', await t.log.appendSnapshot(snapshot(account, o, 'pending', 1000), 1000)],
      ['snapshot at 1000 again', await t.log.appendSnapshot(snapshot(account, o, 'pending', 1000), 1000)],
      ['webhook at 1000 (same state, later)', asNews(await t.log.append(webhook(account, o + 5, o, 'pending', 1000)))],
      ['webhook at 2000', asNews(await t.log.append(webhook(account, o + 6, o, 'approved', 2000)))],
      ['snapshot at 2000 (state the webhook brought)', await t.log.appendSnapshot(snapshot(account, o, 'approved', 2000), 2000)],
      ['snapshot at 1500 (older)', await t.log.appendSnapshot(snapshot(account, o, 'pending', 1500), 1500)],
      ['snapshot at 3000', await t.log.appendSnapshot(snapshot(account, o, 'transferred', 3000), 3000)],
      ['webhook at 3000 (same state, later)', asNews(await t.log.append(webhook(account, o + 7, o, 'transferred', 3000)))],
      ['webhook at 4000', asNews(await t.log.append(webhook(account, o + 8, o, 'refunded', 4000)))],
    ];
    expect(steps).toEqual([
      ['snapshot at 1000 (first sight)', true],
      ['snapshot at 1000 again', false],
      ['webhook at 1000 (same state, later)', false],
      ['webhook at 2000', true],
      ['snapshot at 2000 (state the webhook brought)', false],
      ['snapshot at 1500 (older)', false],
      ['snapshot at 3000', true],
      ['webhook at 3000 (same state, later)', false],
      ['webhook at 4000', true],
    ]);
    await t.close();
  });

  it('keeps nothing of a status change whose append failed: the version before it still holds, its redelivery is current', async () => {
    const t = await make();
    const o = fresh();
    expect(await t.log.append(webhook(account, o, o, 'pending', 1000))).toBe('accepted');
    const approved = webhook(account, o + 1, o, 'approved', 2000);
    t.failNextAppend();
    await expect(t.log.append(approved)).rejects.toThrow();
    expect(await t.log.append(webhook(account, o + 2, o, 'pending', 999))).toBe('out_of_order');
    expect(await t.log.append(webhook(account, o + 3, o, 'pending', 1500))).toBe('accepted');
    expect(await t.log.append(approved)).toBe('accepted');
    expect(await t.log.append(approved)).toBe('duplicate');
    expect(statuses(t, o)).toEqual([
      ['pending', true],
      ['pending', false],
      ['pending', true],
      ['approved', true],
    ]);
    await t.close();
  });

  it('keeps nothing of an object\'s first event whose append failed: its redelivery is taken once, as current', async () => {
    const t = await make();
    const o = fresh();
    const first = webhook(account, o, o, 'approved', 1000);
    t.failNextAppend();
    await expect(t.log.append(first)).rejects.toThrow();
    expect(await t.log.append(webhook(account, o + 1, o, 'pending', 1))).toBe('accepted');
    expect(await t.log.append(first)).toBe('accepted');
    expect(await t.log.append(first)).toBe('duplicate');
    await t.close();
  });

  it('keeps nothing of a snapshot whose append failed: the same state re-read again is news', async () => {
    const t = await make();
    const o = fresh();
    expect(await t.log.append(webhook(account, o, o, 'pending', 1000))).toBe('accepted');
    t.failNextAppend();
    await expect(t.log.appendSnapshot(snapshot(account, o, 'approved', 2000), 2000)).rejects.toThrow();
    expect(await t.log.append(webhook(account, o + 1, o, 'pending', 999))).toBe('out_of_order');
    expect(await t.log.appendSnapshot(snapshot(account, o, 'approved', 2000), 2000)).toBe(true);
    await t.close();
  });
}
