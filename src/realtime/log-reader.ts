/**
 * The event log's reader (docs/realtime.md, Reading): only the partitions whose accounts have a listener on this
 * instance, each on its own (a Cluster puts them on different nodes). The append publishes each entry on its
 * partition's channel: taken from there when it is the next one, read from the stream (`XREAD`) when one is missing,
 * and every partition is re-read every second in case a message was lost. A partition first needed reads from a
 * moment before its first listener arrived, by the server's clock, so nothing appended after it is missed.
 */
import { LRUCache } from 'lru-cache';
import type { Cluster } from 'ioredis';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { decode } from '../upstream/index.js';
import { Fanout, type EventListener } from './bus.js';
import { isNewer, objectKey, versionOf, type PaymentEvent, type Version } from './events.js';
import { SNAPSHOT_EVENT_ID } from './ledger.js';
import { partitionOf, type LogKeys } from './log-keys.js';

/** Entries this instance delivered itself and its reader has not yet passed, per partition; past it the oldest go. */
const OWN_MAX = 100_000;
/** Objects whose latest delivered version this instance remembers. */
const DELIVERED_MAX = 100_000;
/** Webhook events this instance delivered, by account and id: far more than a log that started over appends again. */
const DELIVERED_IDS_MAX = 100_000;
const READ_COUNT = 500;
/** The safety re-read: what a lost wake-up costs, at most. */
export const SAFETY_READ_MS = 1000;
/** How far before its first listener a partition is read from: covers the clock estimate's drift between checks. */
export const START_MARGIN_MS = 1000;
const CLOCK_CHECK_MS = 30_000;

/** What this instance's reader processed since it started: the fan-out's cost (docs/operations.md, Metrics). */
export interface EventLogStats {
  /** Entries read from the log, by partition (only the partitions read ever appear). */
  read: Record<number, number>;
  /** How they came: in the append's message (`pushed`), or by a read of the stream (`fetched`: a message missed). */
  via: { pushed: number; fetched: number };
  /** Events handed to at least one listener here: read from the log, or this instance's own appends at once. */
  delivered: { read: number; own: number };
  /** Entries read and not handed on: this instance's own (delivered at append), or of an account nobody here listens to. */
  skipped: { own: number; no_listener: number };
  /** Partitions read now. */
  partitions: number;
}

/** Stream ids are `<ms>-<seq>`, growing within a stream. */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am - bm || as - bs;
}

const sequenceOf = (fields: string[]): number => {
  const at = fields.indexOf('s');
  return at >= 0 && at % 2 === 0 ? Number(fields[at + 1]) || 0 : 0;
};

function fromEntry(fields: string[]): PaymentEvent | null {
  let current: string | undefined;
  let entry: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'c') current = fields[i + 1];
    else if (fields[i] === 'e') entry = fields[i + 1];
  }
  if (entry === undefined) return null;
  try {
    return { ...(decode(entry) as PaymentEvent), current: current === '1' };
  } catch {
    return null;
  }
}

type Entries = [string, string[]][];

/** An entry as its append publishes it (redis-log.ts): `<id>\n<sequence>\n<current>\n<entry>`. */
export const wakeMessage = (id: string, sequence: number, current: '0' | '1', entry: string): string => `${id}\n${sequence}\n${current}\n${entry}`;

/** The fields of a published entry, as a stream read gives them; null for anything else. */
function parseWake(message: string): { id: string; sequence: number; fields: string[] } | null {
  const parts = message.split('\n', 3);
  if (parts.length < 3 || !/^\d+-\d+$/.test(parts[0]!)) return null;
  const [id, seq, current] = parts as [string, string, string];
  const entry = message.slice(id.length + seq.length + current.length + 3);
  const sequence = Number(seq);
  if (!Number.isSafeInteger(sequence) || entry.length === 0) return null;
  return { id, sequence, fields: ['c', current, 's', seq, 'e', entry] };
}

interface Partition {
  index: number;
  stream: string;
  /** Accounts of this partition with a listener here. */
  accounts: number;
  /** The last entry read (or the start): the next read asks for what follows. */
  position: string;
  /** The last entry's sequence number; null until the first read says where the log stood. */
  sequence: number | null;
  own: Set<string>;
  reading: Promise<void> | null;
  again: boolean;
  anchored: boolean;
  onAnchored: (() => void)[];
}

export interface LogReaderOptions {
  keys: LogKeys;
  /** Reads (XREAD); never in subscriber mode. */
  reader: RedisClient;
  /** Wake-ups: SSUBSCRIBE on a Cluster (sharded, one node's), SUBSCRIBE on one server. */
  waker: RedisClient;
  sharded: boolean;
  logger: Logger;
}

export interface LogReader {
  subscribe(accountId: number, listener: EventListener, options?: { internal?: boolean }): () => void;
  listenerCount(): number;
  /** This instance's own append, stored at `at`: delivered here at once, skipped when the reader comes by. */
  own(partition: number, at: string, event: PaymentEvent): void;
  /** An own entry appended again (its subscribers here had it): skipped when the reader comes by. */
  skip(partition: number, at: string): void;
  /** Resolves once the account's partition is read (its first read answered): for tests and benches. */
  whenReading(accountId: number): Promise<void>;
  stats(): EventLogStats;
  close(): Promise<void>;
}

/** Lower bound of the servers' clocks minus this host's monotonic one; TIME on every master of a Cluster. */
async function clockOffset(redis: RedisClient): Promise<number> {
  const nodes = 'nodes' in redis && typeof redis.nodes === 'function' ? (redis as Cluster).nodes('master') : [redis];
  const offsets = await Promise.all(
    nodes.map(async (node) => {
      const [seconds, micros] = await node.time();
      // The server read its clock before the reply left: at the reply's arrival it shows at least this much.
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - performance.now();
    }),
  );
  return Math.min(...offsets);
}

export async function startLogReader(options: LogReaderOptions): Promise<LogReader> {
  const { keys, reader, waker, sharded, logger } = options;
  let offset = await clockOffset(reader);
  const partitions = new Map<number, Partition>();
  const byStream = new Map<string, Partition>();
  const stats: EventLogStats = { read: {}, via: { pushed: 0, fetched: 0 }, delivered: { read: 0, own: 0 }, skipped: { own: 0, no_listener: 0 }, partitions: 0 };
  let closed = false;

  // An instance's own appends skip the queue of its reader: another instance's older entry for the same object, not
  // yet read, would then come after a newer one. It was current when it was appended; here it no longer is.
  const delivered = new LRUCache<string, Version>({ max: DELIVERED_MAX });
  // A log that started over gets the appending instance's recent entries again (redis-log.ts): one delivered here
  // already is not delivered twice.
  const deliveredIds = new LRUCache<string, true>({ max: DELIVERED_IDS_MAX });
  const deliver = (event: PaymentEvent): boolean => {
    if (event.origin !== 'snapshot') {
      const id = `${event.accountId}:${event.id}`;
      if (deliveredIds.has(id)) return false;
      deliveredIds.set(id, true);
    }
    if (event.current && event.objectId !== null) {
      const key = objectKey(event.accountId, event.object, event.objectId);
      const stamp = Date.parse(String(event.entity?.updated_at ?? event.createdAt ?? ''));
      const version: Version = event.origin === 'snapshot' ? [Number.isFinite(stamp) ? stamp : 0, SNAPSHOT_EVENT_ID] : versionOf(event);
      const last = delivered.get(key);
      if (last && !isNewer(version, last)) event = { ...event, current: false };
      else delivered.set(key, version);
    }
    return fanout.deliver(event);
  };

  const fanout = new Fanout(logger, {
    opened: (accountId) => {
      const index = partitionOf(accountId, keys.partitions);
      const p = partitions.get(index);
      if (p) p.accounts += 1;
      else start(index);
    },
    closed: (accountId) => {
      const p = partitions.get(partitionOf(accountId, keys.partitions));
      if (p && --p.accounts === 0) stop(p);
    },
  });

  // A sequence number past the next: entries trimmed before this instance read them. Below it: the log started over.
  const checkSequence = (p: Partition, fields: string[]) => {
    const seq = sequenceOf(fields);
    const last = p.sequence;
    p.sequence = seq;
    if (last === null || seq === last + 1) return;
    if (seq > last + 1)
      logger.error(
        { partition: p.index, lost: seq - last - 1 },
        'event log trimmed past this instance: events it never read are gone for its subscribers (those with an id catch up by re-reads; paymentEvent by resuming with after); raise EVENT_LOG_MAX_EVENTS',
      );
    else logger.error({ partition: p.index }, 'event log started over (Redis lost its data): events appended before are gone');
  };

  const take = (p: Partition, entries: Entries, via: keyof EventLogStats['via']) => {
    for (const [id, fields] of entries) {
      // Taken already from its message while this read was on its way.
      if (compareIds(id, p.position) <= 0) continue;
      stats.read[p.index] = (stats.read[p.index] ?? 0) + 1;
      stats.via[via] += 1;
      p.position = id;
      checkSequence(p, fields);
      if (p.own.delete(id)) {
        stats.skipped.own += 1;
        continue;
      }
      const event = fromEntry(fields);
      if (!event) logger.warn({ stream: p.stream, id }, 'unreadable entry in the event log');
      else if (deliver(event)) stats.delivered.read += 1;
      else stats.skipped.no_listener += 1;
    }
    for (const id of p.own) if (compareIds(id, p.position) <= 0) p.own.delete(id);
  };

  // The first read also learns where the log stood, the partition's sequence number, read just before it: a gap
  // after that (entries trimmed before this instance read them) is then seen. Not MULTI: ioredis leaves a
  // transaction's rejections unhandled when the connection closes under it.
  const firstRead = async (p: Partition): Promise<Entries> => {
    const sequence = Number(await reader.get(keys.sequence(p.index))) || 0;
    const entries = (await reader.xread('COUNT', READ_COUNT, 'STREAMS', p.stream, p.position))?.[0]?.[1] ?? [];
    if (closed || partitions.get(p.index) !== p) return [];
    take(p, entries, 'fetched');
    // What the read brought covers everything up to `sequence` (unless it was cut at READ_COUNT).
    if (entries.length < READ_COUNT) p.sequence = Math.max(p.sequence ?? 0, sequence);
    return entries;
  };

  // One line while reads fail, whatever the cause: a refusal that is not an outage (an ACL, a wrong key type) would
  // otherwise leave this instance deaf to the others in silence.
  let failing = false;
  const read = (p: Partition): Promise<void> => {
    if (p.reading) {
      p.again = true;
      return p.reading;
    }
    p.reading = (async () => {
      try {
        do {
          p.again = false;
          let entries: Entries;
          if (p.anchored) {
            entries = (await reader.xread('COUNT', READ_COUNT, 'STREAMS', p.stream, p.position))?.[0]?.[1] ?? [];
            if (closed || partitions.get(p.index) !== p) return;
            take(p, entries, 'fetched');
          } else {
            entries = await firstRead(p);
            if (closed || partitions.get(p.index) !== p) return;
            p.anchored = true;
            for (const resolve of p.onAnchored.splice(0)) resolve();
          }
          if (entries.length === READ_COUNT) p.again = true;
        } while (p.again && !closed);
        if (failing) logger.info('event log readable again');
        failing = false;
      } catch (error) {
        // Redis away: ioredis reconnects; the safety re-read starts again from the same position.
        if (!closed && !failing) logger.warn({ err: { message: (error as Error).message } }, 'event log unreadable: events from other instances wait until it reads again');
        failing = true;
      } finally {
        p.reading = null;
      }
    })();
    return p.reading;
  };

  // The entry right after the last one taken is taken from its message; one already taken asks for nothing; any
  // other (a message missed, the first read not answered yet) sends the reader to the stream.
  const onWake = (channel: string, message: string) => {
    const p = byStream.get(channel);
    if (!p) return;
    const pushed = parseWake(message);
    if (!pushed || !p.anchored || p.sequence === null) return void read(p);
    if (compareIds(pushed.id, p.position) <= 0) return;
    if (pushed.sequence !== p.sequence + 1) return void read(p);
    take(p, [[pushed.id, pushed.fields]], 'pushed');
  };
  waker.on(sharded ? 'smessage' : 'message', onWake);
  // Wake-ups sent while the connection was away are gone: read whatever came meanwhile.
  const readAll = () => {
    for (const p of partitions.values()) void read(p);
  };
  waker.on('ready', readAll);

  const listen = (p: Partition) => {
    const subscribed = sharded ? waker.ssubscribe(p.stream) : waker.subscribe(p.stream);
    // A wake-up sent before the subscription took is covered by reading once it has.
    subscribed.then(
      () => (partitions.get(p.index) === p ? read(p) : undefined),
      (error: unknown) => {
        if (!closed) logger.warn({ err: { message: (error as Error).message }, partition: p.index }, 'event log wake-ups not subscribed: this partition is read once a second');
      },
    );
  };

  function start(index: number): void {
    // By the server's clock, a margin before now: every entry appended after this listener arrived has a later id.
    const from = Math.max(0, Math.floor(performance.now() + offset - START_MARGIN_MS));
    const p: Partition = { index, stream: keys.stream(index), accounts: 1, position: `${from}-0`, sequence: null, own: new Set(), reading: null, again: false, anchored: false, onAnchored: [] };
    partitions.set(index, p);
    byStream.set(p.stream, p);
    stats.partitions = partitions.size;
    listen(p);
    void read(p);
  }

  function stop(p: Partition): void {
    partitions.delete(p.index);
    byStream.delete(p.stream);
    stats.partitions = partitions.size;
    p.own.clear();
    if (closed) return;
    (sharded ? waker.sunsubscribe(p.stream) : waker.unsubscribe(p.stream)).catch(() => undefined);
  }

  let clockCheckedAt = performance.now();
  const safety = setInterval(() => {
    readAll();
    if (performance.now() - clockCheckedAt < CLOCK_CHECK_MS) return;
    clockCheckedAt = performance.now();
    clockOffset(reader).then(
      (measured) => (offset = measured),
      () => undefined,
    );
  }, SAFETY_READ_MS);
  safety.unref();

  return {
    subscribe: (accountId, listener, opts) => fanout.subscribe(accountId, listener, opts),
    listenerCount: () => fanout.size,
    own(index, at, event) {
      const p = partitions.get(index);
      if (p) {
        // The reader got there first (its reply came before the script's): it delivered the entry already.
        if (compareIds(at, p.position) <= 0) return;
        p.own.add(at);
        if (p.own.size > OWN_MAX) p.own.delete(p.own.values().next().value!);
      }
      if (deliver(event)) stats.delivered.own += 1;
    },
    skip(index, at) {
      const p = partitions.get(index);
      if (p && compareIds(at, p.position) > 0) p.own.add(at);
    },
    whenReading(accountId) {
      const p = partitions.get(partitionOf(accountId, keys.partitions));
      if (!p) return Promise.reject(new Error(`no listener of account ${accountId} here: its partition is not read`));
      return p.anchored ? Promise.resolve() : new Promise((resolve) => p.onAnchored.push(resolve));
    },
    stats: () => ({ ...stats, read: { ...stats.read }, via: { ...stats.via }, delivered: { ...stats.delivered }, skipped: { ...stats.skipped } }),
    async close() {
      closed = true;
      clearInterval(safety);
      reader.disconnect();
      // QUIT lets a subscription ioredis renewed after a reconnect be answered: cut, it is rejected with nobody to
      // hear it. With Redis away QUIT would wait for it to return.
      if (waker.status === 'ready') waker.quit().catch(() => waker.disconnect());
      else waker.disconnect();
      // A read queued while Redis is away is never settled by disconnect(): wait for the reads a moment, not forever.
      const reads = [...partitions.values()].map((p) => p.reading).filter((r): r is Promise<void> => r !== null);
      await Promise.race([Promise.all(reads), new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    },
  };
}
