/**
 * The event log in Redis Streams (docs/realtime.md, The event log): one stream per partition of accounts, each
 * entry appended by one script together with its ledger record, and read by every instance from its own last
 * position, so a reconnect or a Redis restarted from its append-only file resumes where it stopped. The instance
 * that appends hands the event to its own subscribers at once; its reader skips that entry when it comes by. A log
 * that started over (Redis back empty) gets this instance's recent appends again, for the readers that had not read
 * them; every reader drops what it delivered already.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../logger.js';
import type { RedisLinks } from '../redis.js';
import { decode, encode } from '../upstream/index.js';
import { Fanout, type EventBus } from './bus.js';
import { isNewer, objectKey, versionOf, type PaymentEvent, type Version } from './events.js';
import { DEDUPE_TTL_SECONDS, LAST_SEEN_TTL_SECONDS, LEDGER_LUA, SNAPSHOT_EVENT_ID } from './ledger.js';
import type { AppendResult, EventLog } from './log.js';
import { LOG_PARTITIONS, logKeys, partitionOf } from './log-keys.js';
import { RecentAppends, type RecentAppend } from './recent-appends.js';

/**
 * Each entry carries its partition's sequence number (`s`), so a reader sees a gap: entries trimmed before it read
 * them. Read, then written after the append, so a failed append leaves no gap.
 */
const SEQUENCE_LUA = `
local function next_seq(key) return (tonumber(redis.call('GET', key)) or 0) + 1 end
`;

/** KEYS: claim, last, prev, stream, sequence. ARGV: ms, event id, ttl, maxlen, entry, has an object. Returns {0} or {1|2, id}. */
const APPEND_EVENT = `${LEDGER_LUA}${SEQUENCE_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local current = 1
local cur = false
if ARGV[6] == '1' then
  cur = redis.call('GET', KEYS[2])
  if not is_newer(cur, tonumber(ARGV[1]), tonumber(ARGV[2])) then current = 0 end
end
local seq = next_seq(KEYS[5])
local at = redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'c', current, 's', seq, 'e', ARGV[5])
redis.call('SET', KEYS[5], seq)
redis.call('SET', KEYS[1], '1', 'EX', ARGV[3])
if current == 1 and ARGV[6] == '1' then record_version(KEYS[2], KEYS[3], cur, ARGV[1], ARGV[2], ARGV[3]) end
return {current + 1, at}
`;

/** KEYS: last, stream, sequence. ARGV: ms, snapshot id, ttl, maxlen, entry. Returns {0} or {1, id}. */
const APPEND_SNAPSHOT = `${LEDGER_LUA}${SEQUENCE_LUA}
if not is_later(redis.call('GET', KEYS[1]), tonumber(ARGV[1])) then return {0} end
local seq = next_seq(KEYS[3])
local at = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'c', 1, 's', seq, 'e', ARGV[5])
redis.call('SET', KEYS[3], seq)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return {1, at}
`;

/** KEYS: epoch. ARGV: a new epoch. Returns the epoch in place, making it when there is none. */
const ADOPT_EPOCH = `
local epoch = redis.call('GET', KEYS[1])
if epoch then return epoch end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`;

type Reply = [0] | [1 | 2, string];

interface LogScripts {
  appendEvent(claim: string, last: string, prev: string, stream: string, sequence: string, ms: number, id: number, ttl: number, maxLen: number, entry: string, hasObject: string): Promise<Reply>;
  appendSnapshot(last: string, stream: string, sequence: string, ms: number, id: number, ttl: number, maxLen: number, entry: string): Promise<Reply>;
  adoptEpoch(epoch: string, fresh: string): Promise<string>;
}

/** Stream ids are `<ms>-<seq>`, growing within a stream. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am - bm || as - bs;
}

const sequenceOf = (fields: string[]): number => {
  const at = fields.indexOf('s');
  return at >= 0 && at % 2 === 0 ? Number(fields[at + 1]) || 0 : 0;
};

/** Entries this instance delivered itself and its reader has not yet passed; more than this and the oldest go. */
const OWN_MAX = 100_000;
/** Objects whose latest delivered version this instance remembers. */
const DELIVERED_MAX = 100_000;
/** Webhook events this instance delivered (by account and id): an entry appended again is not delivered twice. */
const DELIVERED_IDS_MAX = 100_000;
/**
 * This instance's own appends kept to append again, far longer than a reader lags (it reads as entries come, under a
 * second even on a loaded machine); what they cost is in docs/realtime.md.
 */
const RECENT = { maxAgeMs: 30_000, maxEntries: 10_000, maxBytes: 16 * 1024 * 1024 };
/** How often the epoch is checked besides each reconnect: a Redis emptied without dropping its connections. */
const EPOCH_CHECK_MS = 1_000;
const READ_COUNT = 500;
const READ_BLOCK_MS = 5_000;

export interface RedisLogOptions {
  url: string;
  prefix: string;
  logger: Logger;
  links: RedisLinks;
  /** EVENT_LOG_MAX_EVENTS: all partitions together, trimmed approximately (`MAXLEN ~`). */
  maxEvents: number;
  partitions?: number;
}

export interface RedisEventLog extends EventBus, EventLog {
  /** The appending connection, for the other shared records (poll leases). */
  redis: Redis;
}

export async function redisEventLog(options: RedisLogOptions): Promise<RedisEventLog> {
  const { logger, links, prefix } = options;
  const partitions = options.partitions ?? LOG_PARTITIONS;
  const keys = logKeys(prefix, partitions);
  const maxLen = Math.ceil(options.maxEvents / partitions);
  const writer = links.open(options.url, 'bus-publisher');
  const reader = links.open(options.url, 'bus-subscriber');
  await Promise.all([writer.connect(), reader.connect()]);
  writer.defineCommand('appendEvent', { numberOfKeys: 5, lua: APPEND_EVENT });
  writer.defineCommand('appendSnapshot', { numberOfKeys: 3, lua: APPEND_SNAPSHOT });
  writer.defineCommand('adoptEpoch', { numberOfKeys: 1, lua: ADOPT_EPOCH });
  const scripts = writer as unknown as LogScripts;
  let epoch = await scripts.adoptEpoch(keys.epoch(), randomUUID());

  const fanout = new Fanout(logger);
  const streams = Array.from({ length: partitions }, (_, p) => keys.stream(p));
  // From each stream's newest entry (what came before this instance started is no subscriber's here), read together
  // with its sequence number, so the next entry read is the one after both.
  const starts = await Promise.all(
    streams.map(async (stream, p) => {
      const [[, newest], [, sequence]] = (await writer.multi().xrevrange(stream, '+', '-', 'COUNT', 1).get(keys.sequence(p)).exec()) as [[null, [string, string[]][]], [null, string | null]];
      return { position: newest[0]?.[0] ?? '0-0', sequence: Number(sequence) || 0 };
    }),
  );
  const positions = starts.map((start) => start.position);
  const sequences = starts.map((start) => start.sequence);
  const own = streams.map(() => new Set<string>());
  let closed = false;

  // An instance's own appends skip the queue of its reader: another instance's older entry for the same object, not
  // yet read, would then come after a newer one. It was current when it was appended; here it no longer is.
  const delivered = new LRUCache<string, Version>({ max: DELIVERED_MAX });
  const deliveredIds = new LRUCache<string, true>({ max: DELIVERED_IDS_MAX });
  const deliver = (event: PaymentEvent) => {
    if (event.origin !== 'snapshot') {
      const id = `${event.accountId}:${event.id}`;
      if (deliveredIds.has(id)) return;
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
    fanout.deliver(event);
  };

  const deliverOwn = (partition: number, at: string, event: PaymentEvent) => {
    // The reader got there first (its reply came before the script's): it delivered the entry already.
    if (compareIds(at, positions[partition]!) <= 0) return;
    const set = own[partition]!;
    set.add(at);
    if (set.size > OWN_MAX) set.delete(set.values().next().value!);
    deliver(event);
  };

  const fromEntry = (fields: string[]): PaymentEvent | null => {
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
  };

  // A sequence number past the next: entries trimmed before this instance read them. Below it: the log started over.
  const checkSequence = (partition: number, fields: string[]) => {
    const seq = sequenceOf(fields);
    const last = sequences[partition]!;
    sequences[partition] = seq;
    if (seq === last + 1) return;
    if (seq > last + 1)
      logger.error(
        { partition, lost: seq - last - 1 },
        'event log trimmed past this instance: events it never read are gone for its subscribers (those with an id catch up by re-reads; paymentEvent by resuming with after); raise EVENT_LOG_MAX_EVENTS',
      );
    else logger.error({ partition }, 'event log started over (Redis lost its data): events appended before are gone');
  };

  // One line while reads fail, whatever the cause: a refusal that is not an outage (an ACL, a wrong key type) would
  // otherwise leave this instance deaf to the others in silence.
  let failing = false;
  const readLoop = async () => {
    while (!closed) {
      try {
        const reply = await reader.xread('COUNT', READ_COUNT, 'BLOCK', READ_BLOCK_MS, 'STREAMS', ...streams, ...positions);
        if (failing) logger.info('event log readable again');
        failing = false;
        for (const [stream, entries] of reply ?? []) {
          const p = streams.indexOf(stream);
          if (p < 0) continue;
          const set = own[p]!;
          for (const [id, fields] of entries) {
            positions[p] = id;
            checkSequence(p, fields);
            if (set.delete(id)) continue;
            const event = fromEntry(fields);
            if (event) deliver(event);
            else logger.warn({ stream, id }, 'unreadable entry in the event log');
          }
          for (const id of set) if (compareIds(id, positions[p]!) <= 0) set.delete(id);
        }
      } catch (error) {
        // Redis away: ioredis reconnects; the next read starts from the same positions.
        if (!closed && !failing) logger.warn({ err: { message: (error as Error).message } }, 'event log unreadable: events from other instances wait until it reads again');
        failing = true;
        if (!closed) await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  const reading = readLoop();

  const recent = new RecentAppends(RECENT);
  const keep = (partition: number, entry: string, redo: RecentAppend['redo']) => recent.add({ at: Date.now(), bytes: entry.length, partition, redo });

  // The log started over: what this instance appended lately goes in again, its own reader skipping it as it would
  // the first time (its subscribers had it); another reader drops what it delivered already (deliveredIds).
  const appendAgain = async () => {
    const entries = recent.take();
    let failed = 0;
    for (const entry of entries) {
      try {
        const reply = await entry.redo();
        if (reply[0] !== 0) {
          if (compareIds(reply[1], positions[entry.partition]!) > 0) own[entry.partition]!.add(reply[1]);
          recent.add({ ...entry });
        }
      } catch {
        failed += 1;
        recent.add(entry);
      }
    }
    return { appended: entries.length - failed, failed };
  };
  let checking = false;
  const checkEpoch = async () => {
    if (checking || closed) return;
    checking = true;
    try {
      const found = await scripts.adoptEpoch(keys.epoch(), randomUUID());
      if (found === epoch) return;
      epoch = found;
      const { appended, failed } = await appendAgain();
      logger.error({ appended, failed }, 'event log started over (Redis lost its data): this instance appended its recent entries again, for the instances that had not read them');
    } catch {
      // Redis away: checked again on reconnect.
    } finally {
      checking = false;
    }
  };
  writer.on('ready', () => void checkEpoch());
  const epochTimer = setInterval(() => void checkEpoch(), EPOCH_CHECK_MS);
  epochTimer.unref();

  return {
    redis: writer,
    async append(event): Promise<AppendResult> {
      const partition = partitionOf(event.accountId, partitions);
      const key = event.objectId === null ? `${event.accountId}:none` : objectKey(event.accountId, event.object, event.objectId);
      const [ms, id] = versionOf(event);
      const entry = encode(event);
      const redo = () => scripts.appendEvent(keys.claim(event.accountId, event.id), keys.last(key), keys.prev(key), keys.stream(partition), keys.sequence(partition), ms, id, DEDUPE_TTL_SECONDS, maxLen, entry, event.objectId === null ? '0' : '1');
      const reply = await redo();
      if (reply[0] === 0) return 'duplicate';
      keep(partition, entry, redo);
      const current = reply[0] === 2;
      deliverOwn(partition, reply[1], { ...event, current });
      return current ? 'accepted' : 'out_of_order';
    },
    async appendSnapshot(event, updatedAtMs) {
      if (event.objectId === null) return false;
      const partition = partitionOf(event.accountId, partitions);
      const { current: _current, ...entry } = event;
      const encoded = encode(entry);
      const last = keys.last(objectKey(event.accountId, event.object, event.objectId));
      const redo = () => scripts.appendSnapshot(last, keys.stream(partition), keys.sequence(partition), updatedAtMs, SNAPSHOT_EVENT_ID, LAST_SEEN_TTL_SECONDS, maxLen, encoded);
      const reply = await redo();
      if (reply[0] === 0) return false;
      keep(partition, encoded, redo);
      deliverOwn(partition, reply[1], { ...event, current: true });
      return true;
    },
    subscribe: (accountId, listener, opts) => fanout.subscribe(accountId, listener, opts),
    listenerCount: () => fanout.size,
    async close() {
      closed = true;
      clearInterval(epochTimer);
      reader.disconnect();
      // A read queued while Redis is away is never settled by disconnect(): wait for the loop a moment, not forever.
      await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
      // QUIT waits for an answer: with Redis away it would hold the shutdown until Redis returns.
      if (writer.status === 'ready') await writer.quit().catch(() => undefined);
      else writer.disconnect();
    },
  };
}
