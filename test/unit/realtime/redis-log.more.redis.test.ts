/**
 * The Redis event log on one real redis-server, around its appends: the message each new entry sends on its
 * partition's channel (and the ones it does not send), a snapshot of no object, the epoch checked on a reconnect and
 * once at a time, the listener count and stats it passes on, and how it closes its connection, Redis up or away.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { Redis } from 'ioredis';
import { createLogger } from '../../../src/logger.js';
import { RedisLinks } from '../../../src/redis.js';
import { singleServer } from '../../../src/redis-target.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { logKeys } from '../../../src/realtime/log-keys.js';
import { redisEventLog, type RedisEventLog } from '../../../src/realtime/redis-log.js';
import { describeWith } from '../../support/tools.js';
import { eventually, sleep } from '../../realtime/support.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { approvedWebhook, type Line } from './redis-log.fixtures.js';
import { startTcpProxy } from '../../realtime/tcp-proxy.js';

const ACCOUNT = 43;

const webhook = (id: number, objectId: number | null, at: string) => approvedWebhook(ACCOUNT, id, objectId, at);

/** The scripts the log defines on its appending connection, the epoch's among them. */
type WithEpochScript = { adoptEpoch(...args: unknown[]): Promise<string> };

describeWith('redis-server', 'the Redis event log, its messages, epoch checks and close', () => {
  const client = redisClientsForSuite();
  const opened: RedisEventLog[] = [];
  let url = '';
  let n = 0;
  beforeAll(() => {
    url = `redis://127.0.0.1:${client().options.port}`;
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    for (const log of opened) await log.close();
  });

  /** A log with one partition, its lines kept, on its own prefix (or on `port`, a proxy's). */
  async function open(port?: number) {
    const prefix = `more-${Date.now()}-${++n}:`;
    const lines: Line[] = [];
    const logger = createLogger('info', { destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
    const target = singleServer(port === undefined ? url : `redis://127.0.0.1:${port}`);
    const log = await redisEventLog({ target, prefix, logger, links: new RedisLinks(logger), maxEvents: 1000, partitions: 1 });
    opened.push(log);
    const keys = logKeys(prefix, 1);
    const startedOver = () => lines.filter((l) => l.msg.startsWith('event log started over (Redis lost its data): this instance appended')).map((l) => [l.appended, l.failed]);
    return { log, lines, keys, prefix, startedOver };
  }

  it('sends each new entry once on its partition\'s channel by plain PUBLISH, as stored, flagged current or not; nothing for a duplicate or a snapshot that is no news', async () => {
    const { log, keys } = await open();
    const subscriber = client();
    const messages: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => void messages.push(message));
    // A plain subscriber: a sharded SPUBLISH would not reach it.
    await subscriber.subscribe(keys.stream(0));
    const at = '2026-01-01T10:00:05.000Z';
    expect(await log.append(webhook(1, 1, at))).toBe('accepted');
    expect(await log.append(webhook(1, 1, at))).toBe('duplicate');
    expect(await log.append(webhook(2, 1, '2026-01-01T10:00:00.000Z'))).toBe('out_of_order');
    expect(await log.append(webhook(3, null, at))).toBe('accepted');
    const snapshot: PaymentEvent = { ...webhook(0, 2, at), current: true, origin: 'snapshot' };
    expect(await log.appendSnapshot(snapshot, Date.parse(at))).toBe(true);
    expect(await log.appendSnapshot(snapshot, Date.parse(at))).toBe(false);
    await eventually(async () => messages.length, (count) => count >= 4);
    // Long enough for a message too many to show.
    await sleep(300);
    // Each message is its stream entry: id, sequence, current flag, the entry.
    const stored = (await client().xrange(keys.stream(0), '-', '+')).map(([id, f]) => `${id}\n${f[f.indexOf('s') + 1]}\n${f[f.indexOf('c') + 1]}\n${f[f.indexOf('e') + 1]}`);
    expect(messages).toEqual(stored);
    expect(messages.map((m) => m.split('\n').slice(2, 3).concat(String((JSON.parse(m.split('\n').slice(3).join('\n')) as { id: number }).id)))).toEqual([
      ['1', '1'],
      ['0', '2'],
      ['1', '3'],
      ['1', '0'],
    ]);
  });

  it('appends no snapshot of an event with no object', async () => {
    const { log, keys } = await open();
    const snapshot: PaymentEvent = { ...webhook(0, null, '2026-01-01T10:00:00.000Z'), current: true, origin: 'snapshot' };
    expect(await log.appendSnapshot(snapshot, Date.parse('2026-01-01T10:00:00.000Z'))).toBe(false);
    expect(await client().xlen(keys.stream(0))).toBe(0);
  });

  it('passes on its reader\'s listener count and stats', async () => {
    const { log } = await open();
    const offA = log.subscribe(ACCOUNT, () => undefined);
    log.subscribe(ACCOUNT + 1, () => undefined);
    expect(log.listenerCount()).toBe(2);
    offA();
    expect(log.listenerCount()).toBe(1);
    await log.append(webhook(1, 1, '2026-01-01T10:00:00.000Z'));
    expect(log.stats()).toMatchObject({ delivered: { own: 0 }, partitions: 1 });
    log.subscribe(ACCOUNT, () => undefined);
    await log.append(webhook(2, 2, '2026-01-01T10:00:00.000Z'));
    expect(log.stats()).toMatchObject({ delivered: { own: 1 }, partitions: 1 });
  });

  it('checks the epoch when its connection to Redis is ready again, not only once a second', async () => {
    // The once-a-second check never fires here: only the reconnect can find the log started over.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { log, prefix, startedOver } = await open();
    await log.append(webhook(1, 1, '2026-01-01T10:00:00.000Z'));
    await client().del(...(await client().keys(`${prefix}*`)));
    const id = await (log.redis as Redis).client('ID');
    await client().client('KILL', 'ID', String(id));
    await eventually(async () => startedOver(), (told) => told.length === 1, 5_000);
    expect(startedOver()).toEqual([[1, 0]]);
  });

  it('checks the epoch once at a time: a tick while a check is under way starts none', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { log } = await open();
    const adopt = vi.spyOn(log.redis as unknown as WithEpochScript, 'adoptEpoch');
    // Two ticks at once: the second comes while the first waits for Redis.
    vi.advanceTimersByTime(2_000);
    expect(adopt).toHaveBeenCalledTimes(1);
    await adopt.mock.results[0]!.value;
    await sleep(50);
    // Done, the next tick checks again.
    vi.advanceTimersByTime(1_000);
    expect(adopt).toHaveBeenCalledTimes(2);
  });

  it('checks no epoch once it is closing, even when its connection comes back meanwhile', async () => {
    const { log, keys } = await open();
    await client().del(keys.epoch());
    const adopt = vi.spyOn(log.redis as unknown as WithEpochScript, 'adoptEpoch');
    const closing = log.close();
    // As a reconnect finishing while the reader closes.
    log.redis.emit('ready');
    await closing;
    expect(adopt).not.toHaveBeenCalled();
    expect(await client().exists(keys.epoch())).toBe(0);
  });

  it('closes its connection by QUIT while Redis is up', async () => {
    const { log } = await open();
    const quit = vi.spyOn(log.redis, 'quit');
    await log.close();
    expect(quit).toHaveBeenCalledTimes(1);
    await eventually(async () => log.redis.status, (status) => status === 'end');
  });

  it('cuts its connection off while Redis is away, an append waiting on it, and stops connecting again', async () => {
    const proxy = await startTcpProxy(client().options.port!);
    const { log } = await open(proxy.port);
    // Redis away: every connection dropped, and none can be made again.
    await proxy.close();
    await eventually(async () => log.redis.status, (status) => status !== 'ready');
    const waiting = log.append(webhook(1, 1, '2026-01-01T10:00:00.000Z')).catch((error: unknown) => error);
    await log.close();
    expect(await waiting).toBeInstanceOf(Error);
    // Cut off, it tries no more: a QUIT queued behind the append would have it connect again and again to send it.
    let attempts = 0;
    log.redis.on('reconnecting', () => (attempts += 1));
    await sleep(1_000);
    expect(attempts).toBe(0);
  });
});
