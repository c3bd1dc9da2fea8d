/**
 * The event log's reader over a stand-in for its two Redis connections (the stream read and the wake-ups): where a
 * partition starts, what a wake-up message is trusted with and when the stream is read instead, the sequence's
 * gaps, reads that overlap or fail, the instance's own appends, and what closing leaves. The same reader over a
 * real redis-server: log-reader.redis.test.ts and redis-log*.redis.test.ts.
 */
import { EventEmitter } from 'node:events';
import { afterEach, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import type { RedisClient } from '../../../src/redis.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { compareIds, startLogReader, wakeMessage, type LogReader } from '../../../src/realtime/log-reader.js';
import { logKeys } from '../../../src/realtime/log-keys.js';
import { encode } from '../../../src/upstream/codec.js';

const PARTITIONS = 4;
const keys = logKeys('t:', PARTITIONS);
type Entry = [string, string[]];

interface Gate {
  promise: Promise<void>;
  open(): void;
}
const gate = (): Gate => {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
};

/** The reading connection: a stream per key, GET, TIME and XREAD as Redis answers them. */
class FakeReader {
  readonly streams = new Map<string, Entry[]>();
  readonly values = new Map<string, string>();
  readonly reads: { stream: string; from: string }[] = [];
  /** Server clock minus this host's, in ms. */
  skew = 0;
  timeCalls = 0;
  failure: Error | null = null;
  /** While set, each read is answered (its entries taken as they are now) but its reply waits for the gate. */
  held: Gate | null = null;
  /** A read that never comes back (Redis away). */
  hang = false;
  disconnected = false;

  async time(): Promise<[string, string]> {
    this.timeCalls += 1;
    const ms = Date.now() + this.skew;
    return [String(Math.floor(ms / 1000)), String((ms % 1000) * 1000 + 999)];
  }

  /** Runs once GET answered: what another instance appends between the first read's two commands. */
  afterGet: (() => void) | null = null;

  async get(key: string): Promise<string | null> {
    const value = this.values.get(key) ?? null;
    this.afterGet?.();
    this.afterGet = null;
    return value;
  }

  async xread(...args: (string | number)[]): Promise<[string, Entry[]][] | null> {
    const [count, n, streams, stream, from] = args as [string, number, string, string, string];
    if (count !== 'COUNT' || streams !== 'STREAMS' || args.length !== 5) throw new Error(`unexpected XREAD ${args.join(' ')}`);
    this.reads.push({ stream, from });
    if (this.failure) throw this.failure;
    const entries = (this.streams.get(stream) ?? []).filter(([id]) => compareIds(id, from) > 0).slice(0, n);
    if (this.hang) await new Promise(() => undefined);
    if (this.held) await this.held.promise;
    return entries.length > 0 ? [[stream, entries]] : null;
  }

  disconnect(): void {
    this.disconnected = true;
  }
}

/** The subscriber connection: what was (un)subscribed, and the messages the test sends. */
class FakeWaker extends EventEmitter {
  readonly calls: string[] = [];
  status = 'ready';
  refuse: Error | null = null;
  /** While set, (un)subscriptions wait for it, then are refused if `refuse` is set by then. */
  held: Gate | null = null;
  quitFails = false;
  private async answer(call: string, channel: string): Promise<unknown> {
    this.calls.push(`${call} ${channel}`);
    if (this.held) await this.held.promise;
    if (this.refuse) throw this.refuse;
    return 1;
  }
  subscribe = (channel: string) => this.answer('subscribe', channel);
  ssubscribe = (channel: string) => this.answer('ssubscribe', channel);
  unsubscribe = (channel: string) => this.answer('unsubscribe', channel);
  sunsubscribe = (channel: string) => this.answer('sunsubscribe', channel);
  quit = () => {
    this.calls.push('quit');
    return this.quitFails ? Promise.reject(new Error('gone')) : Promise.resolve('OK');
  };
  disconnect = () => void this.calls.push('disconnect');
}

interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const settle = (ms = 10) => new Promise((resolve) => setTimeout(resolve, ms));

let open: LogReader[] = [];
afterEach(async () => {
  await Promise.all(open.map((r) => r.close()));
  open = [];
});

async function setup(options: { sharded?: boolean; reader?: FakeReader; redis?: unknown } = {}) {
  const sharded = options.sharded ?? false;
  const redis = options.reader ?? new FakeReader();
  const waker = new FakeWaker();
  const lines: Line[] = [];
  const logger = createLogger('info', { destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
  const reader = await startLogReader({ keys, reader: (options.redis ?? redis) as RedisClient, waker: waker as unknown as RedisClient, sharded, logger });
  open.push(reader);
  let lastMs = 0;
  let seqInMs = 0;
  /** Appends to a partition's stream as the append script does; returns what its message would carry. */
  const append = (partition: number, event: Omit<PaymentEvent, 'current'>, how: { current?: '0' | '1'; seq?: number; fields?: string[]; id?: string } = {}) => {
    const ms = Math.max(Date.now() + redis.skew, lastMs);
    seqInMs = ms === lastMs ? seqInMs + 1 : 0;
    lastMs = ms;
    const id = how.id ?? `${ms}-${seqInMs}`;
    const seq = how.seq ?? Number(redis.values.get(keys.sequence(partition)) ?? 0) + 1;
    const entry = encode(event);
    const current = how.current ?? '1';
    const stream = keys.stream(partition);
    if (!redis.streams.has(stream)) redis.streams.set(stream, []);
    redis.streams.get(stream)!.push([id, how.fields ?? ['c', current, 's', String(seq), 'e', entry]]);
    redis.values.set(keys.sequence(partition), String(seq));
    const message = wakeMessage(id, seq, current, entry);
    return { id, seq, entry, message, wake: () => void waker.emit(sharded ? 'smessage' : 'message', stream, message) };
  };
  const errors = () => lines.filter((l) => l.level >= 40);
  return { redis, waker, reader, lines, errors, append };
}

let nextId = 1;
/** A webhook of account `accountId` (partition accountId % 4), its object's state at `second`. */
const webhook = (accountId: number, second = nextId, objectId = 1000 + nextId): Omit<PaymentEvent, 'current'> => {
  const id = nextId++;
  const at = new Date(Date.UTC(2026, 0, 1, 10, 0, second)).toISOString();
  return { id, type: 'transaction.approved', object: 'transaction', objectId, accountId, entity: { id: objectId, status: 'approved', updated_at: at }, createdAt: at };
};

function listen(reader: LogReader, accountId: number) {
  const got: PaymentEvent[] = [];
  const stop = reader.subscribe(accountId, (e) => got.push(e));
  return { got, stop, ids: () => got.map((e) => e.id) };
}

it('compares stream ids by their milliseconds, then their sequence, as numbers', () => {
  expect(compareIds('2-0', '10-0')).toBeLessThan(0);
  expect(compareIds('10-0', '2-0')).toBeGreaterThan(0);
  expect(compareIds('5-2', '5-10')).toBeLessThan(0);
  expect(compareIds('5-10', '5-2')).toBeGreaterThan(0);
  expect(compareIds('5-3', '5-3')).toBe(0);
  expect(compareIds('6-0', '5-9')).toBeGreaterThan(0);
  expect(wakeMessage('5-1', 7, '1', 'x\ny')).toBe('5-1\n7\n1\nx\ny');
});

it('starts a partition a second before now by the server\'s clock, the slowest master\'s on a Cluster', async () => {
  // One server an hour ahead of this host.
  const { redis, reader } = await setup();
  redis.skew = 3_600_000;
  // The offset was measured at start: the skew set after it only shows once the clock is checked again.
  const before = Date.now();
  const { got } = listen(reader, 1);
  await settle();
  expect(redis.reads.length).toBeGreaterThan(0);
  const from = Number(redis.reads[0]!.from.split('-')[0]);
  expect(redis.reads[0]!.from).toMatch(/^\d+-0$/);
  expect(from).toBeGreaterThanOrEqual(before - 1_000 - 100);
  expect(from).toBeLessThanOrEqual(Date.now() - 1_000 + 100);
  expect(got).toEqual([]);

  const skewed = new FakeReader();
  skewed.skew = 3_600_000;
  const ahead = await setup({ reader: skewed });
  listen(ahead.reader, 1);
  await settle();
  const aheadFrom = Number(skewed.reads[0]!.from.split('-')[0]);
  expect(aheadFrom - (Date.now() + 3_600_000 - 1_000)).toBeLessThanOrEqual(100);
  expect(aheadFrom - (before + 3_600_000 - 1_000)).toBeGreaterThanOrEqual(-100);

  // A Cluster: its masters' clocks, the lowest taken (an entry's id comes from its own master's clock).
  const masters = [new FakeReader(), new FakeReader(), new FakeReader()];
  [masters[0]!.skew, masters[1]!.skew, masters[2]!.skew] = [60_000, 20_000, 90_000];
  const cluster = Object.assign(new FakeReader(), { nodes: (role: string) => (role === 'master' ? masters : []) });
  const onCluster = await setup({ reader: cluster, redis: cluster });
  listen(onCluster.reader, 1);
  await settle();
  expect(masters.map((m) => m.timeCalls)).toEqual([1, 1, 1]);
  expect(cluster.timeCalls).toBe(0);
  const clusterFrom = Number(cluster.reads[0]!.from.split('-')[0]);
  expect(Math.abs(clusterFrom - (Date.now() + 20_000 - 1_000))).toBeLessThanOrEqual(200);
});

it('reads only the partitions its listeners need, subscribed to their channels, and lets go of one its last listener left', async () => {
  const { redis, waker, reader, append } = await setup();
  const one = listen(reader, 1);
  const five = listen(reader, 5); // the same partition as 1
  await reader.whenReading(5);
  expect(waker.calls).toEqual([`subscribe ${keys.stream(1)}`]);
  expect(reader.stats().partitions).toBe(1);
  append(1, webhook(1));
  append(2, webhook(2));
  append(1, webhook(5));
  one.stop();
  // Its partition still has a listener: still read.
  await reader.whenReading(5);
  waker.emit('ready');
  await settle();
  expect(five.ids()).toHaveLength(1);
  expect(one.got).toEqual([]);
  expect(redis.reads.every((r) => r.stream === keys.stream(1))).toBe(true);
  expect(reader.stats().read).toEqual({ 1: 2 });
  expect(reader.stats().skipped.no_listener).toBe(1);
  five.stop();
  expect(waker.calls).toEqual([`subscribe ${keys.stream(1)}`, `unsubscribe ${keys.stream(1)}`]);
  expect(reader.stats().partitions).toBe(0);
  await expect(reader.whenReading(1)).rejects.toThrow('no listener of account 1 here: its partition is not read');
  // A message for a partition no longer read asks for nothing.
  const reads = redis.reads.length;
  append(1, webhook(1)).wake();
  await settle();
  expect(redis.reads.length).toBe(reads);
});

it('subscribes sharded on a Cluster and takes its sharded messages, not plain ones', async () => {
  const { redis, waker, reader, append } = await setup({ sharded: true });
  const { got, stop: stopTwo } = listen(reader, 2);
  await reader.whenReading(2);
  expect(waker.calls).toEqual([`ssubscribe ${keys.stream(2)}`]);
  const reads = redis.reads.length;
  const sent = append(2, webhook(2));
  waker.emit('message', keys.stream(2), sent.message);
  expect(got).toEqual([]);
  sent.wake();
  expect(got.map((e) => e.id)).toHaveLength(1);
  expect(reader.stats().via).toEqual({ pushed: 1, fetched: 0 });
  await settle();
  expect(redis.reads.length).toBe(reads);
  stopTwo();
  expect(waker.calls.at(-1)).toBe(`sunsubscribe ${keys.stream(2)}`);
});

it('takes the next entry from its message as it comes, with its fields, and reads nothing for it', async () => {
  const { redis, reader, append, errors } = await setup();
  const { got } = listen(reader, 3);
  await reader.whenReading(3);
  const reads = redis.reads.length;
  const event = webhook(3);
  const first = append(3, event);
  first.wake();
  // Taken in the message's own turn.
  expect(got).toEqual([{ ...event, current: true }]);
  const stale = append(3, webhook(3), { current: '0' });
  stale.wake();
  expect(got.map((e) => e.current)).toEqual([true, false]);
  // A message already taken (sent twice) is dropped, and asks for no read.
  stale.wake();
  first.wake();
  await settle();
  expect(got).toHaveLength(2);
  expect(redis.reads.length).toBe(reads);
  expect(reader.stats().via).toEqual({ pushed: 2, fetched: 0 });
  expect(reader.stats().read).toEqual({ 3: 2 });
  expect(errors()).toEqual([]);
});

it('reads the stream for a message that skips one, and for one it cannot trust, never taking what the message says', async () => {
  const { redis, waker, reader, append, errors } = await setup();
  const { got, ids } = listen(reader, 1);
  await reader.whenReading(1);
  const stream = keys.stream(1);
  // The first one's message was lost: the second's skips a sequence number, so the stream is read for both.
  const lost = append(1, webhook(1));
  const second = append(1, webhook(1));
  let reads = redis.reads.length;
  second.wake();
  await settle();
  expect(redis.reads.length).toBe(reads + 1);
  expect(ids()).toEqual([decodeId(lost.entry), decodeId(second.entry)]);
  expect(reader.stats().via).toEqual({ pushed: 0, fetched: 2 });

  // Malformed messages, each claiming the next sequence number for an event the stream does not hold.
  const next = Number(redis.values.get(keys.sequence(1))) + 1;
  const fake = encode(webhook(1));
  const id = `${Date.now() + 10}-0`;
  for (const message of [`x${id}\n${next}\n1\n${fake}`, `${id}x\n${next}\n1\n${fake}`, `${id}\n${next}\n1`, `${id}\n${next}\n1\n`, `${id}\n${next}`]) {
    reads = redis.reads.length;
    waker.emit('message', stream, message);
    await settle();
    expect(redis.reads.length, message).toBe(reads + 1);
  }
  expect(got).toHaveLength(2);
  expect(errors()).toEqual([]);

  // A real id of many digits on both sides is trusted.
  const third = append(1, webhook(1), { id: `${Date.now() + 20}-12` });
  reads = redis.reads.length;
  third.wake();
  expect(ids().at(-1)).toBe(decodeId(third.entry));
  expect(reader.stats().via).toEqual({ pushed: 1, fetched: 2 });
  await settle();
  expect(redis.reads.length).toBe(reads);
});

const decodeId = (entry: string) => (JSON.parse(entry) as { id: number }).id;

it('reads the stream for a message that comes before its partition\'s first read answered', async () => {
  const reader0 = new FakeReader();
  reader0.held = gate();
  const { redis, reader, append } = await setup({ reader: reader0 });
  const { ids } = listen(reader, 2);
  const sent = append(2, webhook(2));
  await settle();
  // The first read has not answered: the message is not taken, and asks for another read once that one ends.
  sent.wake();
  expect(ids()).toEqual([]);
  const held = redis.held!;
  redis.held = null;
  held.open();
  await reader.whenReading(2);
  await settle();
  expect(ids()).toEqual([decodeId(sent.entry)]);
  expect(reader.stats().via).toEqual({ pushed: 0, fetched: 1 });
  // The first read (before the entry) and the one the message asked for.
  expect(redis.reads.length).toBe(2);
});


it('reads again at once when asked while a read is on its way, and takes nothing twice that a message gave meanwhile', async () => {
  const { redis, waker, reader, append, errors } = await setup();
  const { ids } = listen(reader, 3);
  await reader.whenReading(3);
  const first = append(3, webhook(3));
  const second = append(3, webhook(3));
  // A reconnect asks for a read: answered at once (it holds both entries), its reply held on its way.
  const held = (redis.held = gate());
  waker.emit('ready');
  await settle();
  redis.held = null;
  const reads = redis.reads.length;
  // Meanwhile both messages arrive and are taken.
  first.wake();
  second.wake();
  expect(ids()).toEqual([decodeId(first.entry), decodeId(second.entry)]);
  // A third entry whose message was lost, and another wake-up while the read is still on its way.
  const third = append(3, webhook(3));
  waker.emit('ready');
  expect(redis.reads.length).toBe(reads);
  held.open();
  await settle();
  // The held reply's two entries were taken already; the read asked for meanwhile, right after it, brings the third.
  expect(redis.reads.length).toBe(reads + 1);
  expect(ids()).toEqual([decodeId(first.entry), decodeId(second.entry), decodeId(third.entry)]);
  expect(reader.stats().read).toEqual({ 3: 3 });
  expect(reader.stats().via).toEqual({ pushed: 2, fetched: 1 });
  expect(errors()).toEqual([]);
});

it('reads a backlog in pages of 500, one right after another, until it is through', async () => {
  const { redis, waker, reader, append, errors } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  for (let i = 0; i < 1200; i += 1) append(1, webhook(1, 1, 7));
  const reads = redis.reads.length;
  waker.emit('ready');
  await settle(50);
  expect(got).toHaveLength(1200);
  expect(redis.reads.length - reads).toBe(3);
  expect(errors()).toEqual([]);
});

it('learns where the log stood from its sequence before the first read, unless that read was cut at its page', async () => {
  // 600 entries (401 to 1000, the first 400 trimmed) appended as the first listener arrives: the first page's
  // last entry (900) is where it stands, not the key's 1000.
  const reader0 = new FakeReader();
  const cut = await setup({ reader: reader0 });
  for (let i = 0; i < 600; i += 1) cut.append(1, webhook(1, 1, 7), { seq: 401 + i });
  const many = listen(cut.reader, 1);
  await cut.reader.whenReading(1);
  await settle(30);
  expect(many.got).toHaveLength(600);
  expect(cut.errors()).toEqual([]);

  // Not cut: the key's number is where it stands, so the next message is taken (5 + 1), and a gap after it is told.
  const { redis, reader, append, errors } = await setup();
  redis.values.set(keys.sequence(2), '5');
  const { got } = listen(reader, 2);
  await reader.whenReading(2);
  const sixth = append(2, webhook(2));
  expect(sixth.seq).toBe(6);
  sixth.wake();
  expect(got).toHaveLength(1);
  expect(reader.stats().via).toEqual({ pushed: 1, fetched: 0 });
  append(2, webhook(2), { seq: 9 }).wake();
  await settle();
  expect(got).toHaveLength(2);
  expect(errors().map((l) => [l.level, l.partition, l.lost, l.msg])).toEqual([
    [50, 2, 2, 'event log trimmed past this instance: events it never read are gone for its subscribers (those with an id catch up by re-reads; paymentEvent by resuming with after); raise EVENT_LOG_MAX_EVENTS'],
  ]);
});

it('says the log started over when the sequence goes back, and takes the entries that follow without a word', async () => {
  const { waker, reader, append, errors } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  for (const seq of [1, 2]) append(1, webhook(1), { seq }).wake();
  // The same number again is a start-over too, not a gap.
  for (const seq of [2, 3, 4]) append(1, webhook(1), { seq });
  waker.emit('ready');
  await settle();
  expect(got).toHaveLength(5);
  expect(errors().map((l) => [l.level, l.partition, l.msg])).toEqual([[50, 1, 'event log started over (Redis lost its data): events appended before are gone']]);
});

it('skips an entry it cannot read, told with its place; one that does not say it is current is not', async () => {
  const { waker, reader, append, errors } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  const event = webhook(1);
  const entries = [
    append(1, webhook(1), { fields: ['c', '1', 's', '1'] }),
    append(1, webhook(1), { fields: ['c', '1', 's', '2', 'e', '{not json'] }),
    append(1, webhook(1), { fields: ['s', '3', 'e', encode(event)] }),
    append(1, webhook(1), { fields: ['s', '4', 'c', '0', 'e', encode({ ...event, id: event.id + 1000 })] }),
    // An odd field left at the end, no value: not the entry.
    append(1, webhook(1), { fields: ['s', '5', 'c', '1', 'e'] }),
  ];
  waker.emit('ready');
  await settle();
  expect(got.map((e) => [e.id, e.current])).toEqual([
    [event.id, false],
    [event.id + 1000, false],
  ]);
  expect(errors().map((l) => [l.level, l.msg, l.stream, l.id])).toEqual(
    [0, 1, 4].map((i) => [40, 'unreadable entry in the event log', keys.stream(1), entries[i]!.id]),
  );
});

it('says once that reads fail while they fail, with the cause, and once that they work again', async () => {
  const { redis, waker, reader, lines } = await setup();
  listen(reader, 1);
  await reader.whenReading(1);
  redis.failure = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
  for (let i = 0; i < 3; i += 1) {
    waker.emit('ready');
    await settle();
  }
  redis.failure = null;
  for (let i = 0; i < 2; i += 1) {
    waker.emit('ready');
    await settle();
  }
  expect(lines.map((l) => [l.level, l.msg, (l.err as { message?: string } | undefined)?.message])).toEqual([
    [40, 'event log unreadable: events from other instances wait until it reads again', redis.failure === null ? 'WRONGTYPE Operation against a key holding the wrong kind of value' : ''],
    [30, 'event log readable again', undefined],
  ]);
  // Closed, a failing read says nothing.
  await reader.close();
  redis.failure = new Error('Connection is closed.');
  waker.emit('ready');
  await settle();
  expect(lines).toHaveLength(2);
});

it('reads a partition whose wake-ups were refused, told once with its partition, and says nothing of one refused after closing', async () => {
  const { redis, waker, reader, lines, append } = await setup();
  waker.refuse = new Error('ERR unknown command ssubscribe');
  const { got } = listen(reader, 2);
  await reader.whenReading(2);
  await settle();
  expect(lines.map((l) => [l.level, l.msg, l.partition, (l.err as { message: string }).message])).toEqual([
    [40, 'event log wake-ups not subscribed: this partition is read once a second', 2, 'ERR unknown command ssubscribe'],
  ]);
  // Read all the same (a reconnect here; the safety read in production).
  append(2, webhook(2));
  waker.emit('ready');
  await settle();
  expect(got).toHaveLength(1);
  expect(redis.reads.length).toBe(2);

  waker.held = gate();
  listen(reader, 3);
  await reader.close();
  waker.held.open();
  await settle();
  expect(lines).toHaveLength(1);
});

it('reads nothing for a partition left before its subscription or its first read answered', async () => {
  const { redis, waker, reader } = await setup();
  const held = (waker.held = gate());
  const readHeld = (redis.held = gate());
  const { stop } = listen(reader, 1);
  await settle();
  stop();
  waker.held = null;
  redis.held = null;
  readHeld.open();
  await settle();
  held.open();
  await settle();
  // Only the first read, asked at the start; its reply is dropped, and the late subscription asks for none.
  expect(redis.reads).toHaveLength(1);
  expect(reader.stats()).toMatchObject({ read: {}, partitions: 0, skipped: { own: 0, no_listener: 0 } });
  await expect(reader.whenReading(1)).rejects.toThrow();
});

it('drops the reply of a read that was on its way when the partition was left, and tells whenReading only of its own partition', async () => {
  const { redis, waker, reader, append } = await setup();
  const { stop } = listen(reader, 1);
  await reader.whenReading(1);
  append(1, webhook(1));
  const held = (redis.held = gate());
  waker.emit('ready');
  await settle();
  stop();
  redis.held = null;
  held.open();
  await settle();
  expect(reader.stats().read).toEqual({});
  // Listened to again: a new start, from a second before now.
  const again = listen(reader, 1);
  await reader.whenReading(1);
  await settle();
  expect(again.got).toHaveLength(1);
  const waiting = listen(reader, 2);
  const anchored = reader.whenReading(2);
  await expect(anchored).resolves.toBeUndefined();
  waiting.stop();
});

it('delivers its own append at once and skips it when its reader comes by; one the reader had already is not delivered again', async () => {
  const { waker, reader, append } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  const event = webhook(1);
  const mine = append(1, event);
  reader.own(1, mine.id, { ...event, current: true });
  expect(got.map((e) => e.id)).toEqual([event.id]);
  // Appended again (the log started over): its subscribers here had it.
  const again = append(1, event);
  reader.skip(1, again.id);
  waker.emit('ready');
  await settle();
  expect(got).toHaveLength(1);
  expect(reader.stats()).toMatchObject({ delivered: { read: 0, own: 1 }, skipped: { own: 2, no_listener: 0 }, via: { pushed: 0, fetched: 2 } });

  // A snapshot the reader brought before the append's own reply came: not handed on twice.
  const snapshot: PaymentEvent = { ...webhook(1, 30), id: 0, origin: 'snapshot', current: true };
  const read = append(1, snapshot);
  waker.emit('ready');
  await settle();
  expect(got.map((e) => e.origin)).toEqual([undefined, 'snapshot']);
  reader.own(1, read.id, snapshot);
  reader.skip(1, read.id);
  expect(got).toHaveLength(2);
  expect(reader.stats().delivered).toEqual({ read: 1, own: 1 });

  // Own appends of a partition not read here reach nobody, and are not counted.
  reader.own(2, `${Date.now()}-0`, { ...webhook(2), current: true });
  expect(reader.stats().delivered).toEqual({ read: 1, own: 1 });
});

it('keeps an own entry ahead of what it read when it reads the ones before it', async () => {
  const { reader, append } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  const other = append(1, webhook(1));
  const event = webhook(1);
  const mine = append(1, event);
  reader.own(1, mine.id, { ...event, current: true });
  // The other's message: taken, and the own entry after it still waits to be skipped.
  other.wake();
  mine.wake();
  await settle();
  expect(got).toHaveLength(2);
  expect(reader.stats().skipped).toEqual({ own: 1, no_listener: 0 });
});

it('skips each of several own entries waiting for its reader, and is not asked to skip in a partition it does not read', async () => {
  const { waker, reader, append } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  const events = [webhook(1), webhook(1), webhook(1)];
  for (const event of events) reader.own(1, append(1, event).id, { ...event, current: true });
  reader.skip(2, `${Date.now() + 1000}-0`);
  waker.emit('ready');
  await settle();
  expect(got).toHaveLength(3);
  expect(reader.stats().skipped).toEqual({ own: 3, no_listener: 0 });
});

it('remembers up to 100,000 own entries a partition, the oldest going first', async () => {
  const { waker, reader, append } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  // The oldest one is in the stream; the rest are only told, as if the reader had not come by yet.
  const oldest = webhook(1);
  reader.own(1, append(1, oldest).id, { ...oldest, current: true });
  const base = Date.now() + 60_000;
  for (let i = 0; i < 100_000; i += 1) reader.own(1, `${base}-${i}`, { ...webhook(1, 1, 7), current: true });
  waker.emit('ready');
  await settleUntil(() => reader.stats().read[1] === 1);
  // Forgotten, by the reader and by what it delivered (100,000 ids too): read as another's entry, delivered again.
  expect(reader.stats().skipped.own).toBe(0);
  expect(got.filter((e) => e.id === oldest.id)).toHaveLength(2);
}, 20_000);

it('delivers nothing a read brings once it is closed', async () => {
  const first = new FakeReader();
  first.held = gate();
  const starting = await setup({ reader: first });
  const early = listen(starting.reader, 1);
  starting.append(1, webhook(1));
  await settle();
  const closing = starting.reader.close();
  first.held.open();
  await closing;
  await settle();
  expect(early.got).toEqual([]);
  expect(starting.reader.stats().read).toEqual({});

  const { redis, waker, reader, append } = await setup();
  const late = listen(reader, 1);
  await reader.whenReading(1);
  append(1, webhook(1));
  const held = (redis.held = gate());
  waker.emit('ready');
  await settle();
  const closed = reader.close();
  held.open();
  await closed;
  await settle();
  expect(late.got).toEqual([]);
});

it('reads once its subscription took, for an entry whose message went before it', async () => {
  const { redis, waker, reader, append } = await setup();
  const held = (waker.held = gate());
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  waker.held = null;
  // Appended after the first read, its message sent before the subscription took: lost.
  append(1, webhook(1));
  const reads = redis.reads.length;
  held.open();
  await settle();
  expect(redis.reads.length).toBe(reads + 1);
  expect(got).toHaveLength(1);
  expect(reader.listenerCount()).toBe(1);
  reader.subscribe(2, () => undefined);
  reader.subscribe(1, () => undefined, { internal: true });
  expect(reader.listenerCount()).toBe(2);
});

it('takes the entries appended between the first read\'s two commands as where the log stands', async () => {
  const { redis, reader, append, errors } = await setup();
  redis.afterGet = () => {
    append(1, webhook(1));
    append(1, webhook(1));
  };
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  expect(got).toHaveLength(2);
  // Next after them is the third: taken from its message, no gap told.
  append(1, webhook(1)).wake();
  expect(got).toHaveLength(3);
  expect(reader.stats().via).toEqual({ pushed: 1, fetched: 2 });
  expect(errors()).toEqual([]);
});

it('delivers an event once, however many entries carry it (an instance appended it again), and orders webhooks of one instant by id', async () => {
  const { waker, reader, append } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  const event = webhook(1, 5, 700);
  append(1, event);
  append(1, event);
  const next = { ...webhook(1, 5, 700) };
  append(1, next);
  waker.emit('ready');
  await settle();
  expect(got.map((e) => [e.id, e.current])).toEqual([
    [event.id, true],
    [next.id, true],
  ]);
  expect(reader.stats().skipped).toEqual({ own: 0, no_listener: 1 });
});

it('orders what it delivers per object: an older state read after a newer one is no state change, a snapshot ranks by its object\'s time', async () => {
  const { waker, reader, append } = await setup();
  const a = listen(reader, 1);
  const b = listen(reader, 2);
  await Promise.all([reader.whenReading(1), reader.whenReading(2)]);
  const newer = webhook(1, 20, 500);
  reader.own(1, append(1, newer).id, { ...newer, current: true });
  // Another instance's older state of the same object, and one not current there, newer still (it sets nothing).
  append(1, webhook(1, 10, 500));
  append(1, webhook(1, 40, 500), { current: '0' });
  append(1, webhook(1, 30, 500));
  // The same event id on another account is another event.
  append(2, { ...newer, accountId: 2 });
  // Events about no object: never ordered.
  append(1, { ...webhook(1, 50), object: null, objectId: null, entity: null });
  append(1, { ...webhook(1, 45), object: null, objectId: null, entity: null });
  // Snapshots (all id 0): by their object's time, or their creation's, or none; above every event of their instant.
  append(1, { ...webhook(1, 30, 600), id: 0, origin: 'snapshot' });
  append(1, webhook(1, 30, 600));
  append(1, { ...webhook(1, 31, 601), entity: { id: 601 }, id: 0, origin: 'snapshot' });
  append(1, { ...webhook(1, 31, 601), entity: { id: 601 }, id: 3 });
  append(1, { ...webhook(1, 31, 602), entity: null, createdAt: null, id: 0, origin: 'snapshot' });
  append(1, { ...webhook(1, 1, 602), id: 1 });
  waker.emit('ready');
  await settle();
  expect(a.got.map((e) => [e.objectId, e.entity?.updated_at ?? e.createdAt, e.current])).toEqual([
    [500, '2026-01-01T10:00:20.000Z', true],
    [500, '2026-01-01T10:00:10.000Z', false],
    [500, '2026-01-01T10:00:40.000Z', false],
    [500, '2026-01-01T10:00:30.000Z', true],
    [null, '2026-01-01T10:00:50.000Z', true],
    [null, '2026-01-01T10:00:45.000Z', true],
    [600, '2026-01-01T10:00:30.000Z', true],
    [600, '2026-01-01T10:00:30.000Z', false],
    [601, '2026-01-01T10:00:31.000Z', true],
    [601, '2026-01-01T10:00:31.000Z', false],
    [602, null, true],
    [602, '2026-01-01T10:00:01.000Z', true],
  ]);
  expect(b.got.map((e) => [e.id, e.current])).toEqual([[newer.id, true]]);
});

it('reads every partition once a second besides its wake-ups', async () => {
  const { reader, append } = await setup();
  const { got } = listen(reader, 1);
  await reader.whenReading(1);
  append(1, webhook(1));
  await settleUntil(() => got.length === 1, 2_000);
  expect(reader.stats().via).toEqual({ pushed: 0, fetched: 1 });
});

it('closes both connections, QUIT for the subscriber when it is up, and waits for a read that never comes back only a moment', async () => {
  const { redis, waker, reader } = await setup();
  const { stop } = listen(reader, 1);
  await reader.whenReading(1);
  redis.hang = true;
  waker.emit('ready');
  await settle();
  const reads = redis.reads.length;
  const started = Date.now();
  await reader.close();
  expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(redis.disconnected).toBe(true);
  expect(waker.calls.slice(-1)).toEqual(['quit']);
  // Closed: a listener leaving asks nothing of the connections, and no safety read follows.
  stop();
  expect(waker.calls.slice(-1)).toEqual(['quit']);
  await settle(1_100);
  expect(redis.reads.length).toBe(reads);

  const down = await setup();
  down.waker.status = 'reconnecting';
  await down.reader.close();
  expect(down.waker.calls).toEqual(['disconnect']);
  const refused = await setup();
  refused.waker.quitFails = true;
  const quick = Date.now();
  await refused.reader.close();
  expect(Date.now() - quick).toBeLessThan(300);
  await settle();
  expect(refused.waker.calls).toEqual(['quit', 'disconnect']);
});

it('hands out its figures as copies', async () => {
  const { reader } = await setup();
  const stats = reader.stats();
  stats.read[1] = 5;
  stats.via.pushed = 5;
  stats.delivered.read = 5;
  stats.skipped.own = 5;
  expect(reader.stats()).toEqual({ read: {}, via: { pushed: 0, fetched: 0 }, delivered: { read: 0, own: 0 }, skipped: { own: 0, no_listener: 0 }, partitions: 0 });
});

it('measures the server\'s clock again every 30 s, for the partitions started after', async () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
  try {
    const { redis, reader } = await setup();
    expect(redis.timeCalls).toBe(1);
    vi.advanceTimersByTime(29_000);
    expect(redis.timeCalls).toBe(1);
    // The server's clock jumped ten minutes ahead meanwhile.
    redis.skew = 600_000;
    vi.advanceTimersByTime(1_000);
    expect(redis.timeCalls).toBe(2);
    await settle();
    vi.advanceTimersByTime(1_000);
    expect(redis.timeCalls).toBe(2);
    listen(reader, 1);
    await settle();
    const from = Number(redis.reads.at(-1)!.from.split('-')[0]);
    expect(Math.abs(from - (Date.now() + 600_000 + 1_000 - 1_000))).toBeLessThanOrEqual(200);
    // A check that fails leaves the last measure in place (this host's clock has gone on 31 s since it).
    redis.time = () => Promise.reject(new Error('gone'));
    vi.advanceTimersByTime(30_000);
    await settle();
    listen(reader, 2);
    await settle();
    const later = Number(redis.reads.at(-1)!.from.split('-')[0]);
    expect(Math.abs(later - (Date.now() + 600_000 + 31_000 - 1_000))).toBeLessThanOrEqual(200);
  } finally {
    vi.useRealTimers();
  }
});

async function settleUntil(done: () => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await settle(5);
  expect(done()).toBe(true);
}
