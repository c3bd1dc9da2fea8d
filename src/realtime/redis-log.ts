/**
 * The event log in Redis Streams (docs/realtime.md, The event log): one stream per partition of accounts, each
 * entry appended by one script together with its ledger record, then published on the partition's channel once the
 * replicas hold it, and read by the instances whose listeners need that partition, each from its own last position
 * (log-reader.ts), so a reconnect or a Redis restarted from its append-only file resumes where it stopped. The
 * instance that appends hands the event to its own subscribers at once; its reader skips that entry when it comes by.
 * A log that started over (Redis back empty) gets this instance's recent appends again, for the readers that had not
 * read them; every reader drops what it delivered already.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { writeConfirmed, type RedisClient, type RedisLinks, type RedisTarget } from '../redis.js';
import { encode } from '../upstream/index.js';
import type { EventBus } from './bus.js';
import { objectKey, versionOf } from './events.js';
import { DEDUPE_TTL_SECONDS, LAST_SEEN_TTL_SECONDS, LEDGER_LUA, SNAPSHOT_EVENT_ID } from './ledger.js';
import type { AppendResult, EventLog } from './log.js';
import { LOG_PARTITIONS, logKeys, partitionOf } from './log-keys.js';
import { startLogReader, wakeMessage, type EventLogStats } from './log-reader.js';
import { RecentAppends, type RecentAppend } from './recent-appends.js';

export type { EventLogStats } from './log-reader.js';

/**
 * Each entry carries its partition's sequence number (`s`), so a reader sees a gap: entries trimmed before it read
 * them. Read, then written after the append, so a failed append leaves no gap.
 */
const SEQUENCE_LUA = `
local function next_seq(key) return (tonumber(redis.call('GET', key)) or 0) + 1 end
`;

/** KEYS: claim, last, stream, sequence. ARGV: ms, event id, ttl, maxlen, entry, has an object. Returns {0} or {1|2, id, sequence}. */
const APPEND_EVENT = `${LEDGER_LUA}${SEQUENCE_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local current = 1
local cur = false
if ARGV[6] == '1' then
  cur = redis.call('GET', KEYS[2])
  if not is_newer(cur, tonumber(ARGV[1]), tonumber(ARGV[2])) then current = 0 end
end
local seq = next_seq(KEYS[4])
local at = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'c', current, 's', seq, 'e', ARGV[5])
redis.call('SET', KEYS[4], seq)
redis.call('SET', KEYS[1], '1', 'EX', ARGV[3])
if current == 1 and ARGV[6] == '1' then record_version(KEYS[2], ARGV[1], ARGV[2], ARGV[3]) end
return {current + 1, at, seq}
`;

/** KEYS: last, stream, sequence. ARGV: ms, snapshot id, ttl, maxlen, entry. Returns {0} or {1, id, sequence}. */
const APPEND_SNAPSHOT = `${LEDGER_LUA}${SEQUENCE_LUA}
if not is_later(redis.call('GET', KEYS[1]), tonumber(ARGV[1])) then return {0} end
local seq = next_seq(KEYS[3])
local at = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'c', 1, 's', seq, 'e', ARGV[5])
redis.call('SET', KEYS[3], seq)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return {1, at, seq}
`;

/** KEYS: epoch. ARGV: a new epoch. Returns the epoch in place, making it when there is none. */
const ADOPT_EPOCH = `
local epoch = redis.call('GET', KEYS[1])
if epoch then return epoch end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`;

/**
 * This instance's own appends kept to append again, far longer than a reader lags (it reads as entries come, under a
 * second even on a loaded machine); what they cost is in docs/realtime.md.
 */
const RECENT = { maxAgeMs: 30_000, maxEntries: 10_000, maxBytes: 16 * 1024 * 1024, accountShare: 0.25 };
/** How often the epoch is checked besides each reconnect: a Redis emptied without dropping its connections. */
const EPOCH_CHECK_MS = 1_000;

type Reply = [0] | [1 | 2, string, number];
type Pipelined = Parameters<Parameters<typeof writeConfirmed>[2]>[0];

interface LogScripts {
  appendEvent(claim: string, last: string, stream: string, sequence: string, ms: number, id: number, ttl: number, maxLen: number, entry: string, hasObject: string): Promise<Reply>;
  appendSnapshot(last: string, stream: string, sequence: string, ms: number, id: number, ttl: number, maxLen: number, entry: string): Promise<Reply>;
  adoptEpoch(epoch: string, fresh: string): Promise<string>;
}

export interface RedisLogOptions {
  target: RedisTarget;
  prefix: string;
  logger: Logger;
  links: RedisLinks;
  /** EVENT_LOG_MAX_EVENTS: all partitions together, trimmed approximately (`MAXLEN ~`). */
  maxEvents: number;
  partitions?: number;
}

export interface RedisEventLog extends EventBus, EventLog {
  /** The appending connection, for the other shared records (poll leases). */
  redis: RedisClient;
  /** What this instance's reader processed: the metrics' gateway_event_log_*. */
  stats(): EventLogStats;
  /** Resolves once the account's partition is read here (it needs a listener). */
  whenReading(accountId: number): Promise<void>;
}

export async function redisEventLog(options: RedisLogOptions): Promise<RedisEventLog> {
  const { logger, links, prefix } = options;
  const partitions = options.partitions ?? LOG_PARTITIONS;
  const keys = logKeys(prefix, partitions);
  const maxLen = Math.ceil(options.maxEvents / partitions);
  const writer = links.open(options.target, 'bus-publisher');
  // Two connections for the reader's role: one reads, the other is in subscriber mode for the entries' messages.
  const readerLink = links.open(options.target, 'bus-subscriber');
  const sharded = options.target.mode === 'cluster';
  const waker = links.open(options.target, 'bus-subscriber', { sharded });
  await Promise.all([writer.connect(), readerLink.connect(), waker.connect()]);
  writer.defineCommand('appendEvent', { numberOfKeys: 4, lua: APPEND_EVENT });
  writer.defineCommand('appendSnapshot', { numberOfKeys: 3, lua: APPEND_SNAPSHOT });
  writer.defineCommand('adoptEpoch', { numberOfKeys: 1, lua: ADOPT_EPOCH });
  const adoptEpoch = () => (writer as unknown as LogScripts).adoptEpoch(keys.epoch(), randomUUID());
  let epoch = await adoptEpoch();
  // An append is on the replicas asked for (REDIS_REPLICA_ACKS) before its webhook is answered 200 or its event
  // delivered here: one only the dead master had would be gone after a failover. Short of that it throws (a 503).
  const confirmed = (queue: (p: LogScripts) => void) => writeConfirmed(writer, options.target, (p: Pipelined) => queue(p as unknown as LogScripts));
  const reader = await startLogReader({ keys, reader: readerLink, waker, sharded, logger });
  // Each entry on its partition's channel once it is confirmed, for the readers of that partition only: sharded
  // (SPUBLISH: the one node of its slot) on a Cluster, plain PUBLISH on one server, which any version has. Not
  // awaited: a lost message costs a reader a read of the stream, never the entry.
  const publish = (partition: number, reply: [1 | 2, string, number], current: boolean, entry: string) => {
    const message = wakeMessage(reply[1], reply[2], current ? '1' : '0', entry);
    (sharded ? writer.spublish(keys.stream(partition), message) : writer.publish(keys.stream(partition), message)).catch(() => undefined);
  };

  const recent = new RecentAppends(RECENT);
  const keep = (account: number, partition: number, bytes: number, redo: RecentAppend['redo']) => recent.add({ at: Date.now(), bytes, partition, account, redo });

  // The log started over: what this instance appended lately goes in again, its own reader skipping it as it would
  // the first time (its subscribers had it); another reader drops what it delivered already.
  const appendAgain = async () => {
    const entries = recent.take();
    let failed = 0;
    for (const entry of entries) {
      try {
        const reply = await entry.redo();
        if (reply[0] === 0) continue;
        reader.skip(entry.partition, reply[1]);
        recent.add(entry);
      } catch {
        failed += 1;
        recent.add(entry);
      }
    }
    return { appended: entries.length - failed, failed };
  };
  let checking = false;
  let closed = false;
  const checkEpoch = async () => {
    if (checking || closed) return;
    checking = true;
    try {
      const found = await adoptEpoch();
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
      const redo = async (): Promise<Reply> => {
        const [reply] = (await confirmed((p) =>
          p.appendEvent(keys.claim(event.accountId, event.id), keys.last(key), keys.stream(partition), keys.sequence(partition), ms, id, DEDUPE_TTL_SECONDS, maxLen, entry, event.objectId === null ? '0' : '1'),
        )) as [Reply];
        if (reply[0] !== 0) publish(partition, reply, reply[0] === 2, entry);
        return reply;
      };
      const reply = await redo();
      if (reply[0] === 0) return 'duplicate';
      const current = reply[0] === 2;
      keep(event.accountId, partition, entry.length, redo);
      reader.own(partition, reply[1], { ...event, current });
      return current ? 'accepted' : 'out_of_order';
    },
    async appendSnapshot(event, updatedAtMs) {
      if (event.objectId === null) return false;
      const partition = partitionOf(event.accountId, partitions);
      const { current: _current, ...entry } = event;
      const last = keys.last(objectKey(event.accountId, event.object, event.objectId));
      const encoded = encode(entry);
      const redo = async (): Promise<Reply> => {
        const [reply] = (await confirmed((p) =>
          p.appendSnapshot(last, keys.stream(partition), keys.sequence(partition), updatedAtMs, SNAPSHOT_EVENT_ID, LAST_SEEN_TTL_SECONDS, maxLen, encoded),
        )) as [Reply];
        if (reply[0] !== 0) publish(partition, reply, true, encoded);
        return reply;
      };
      const reply = await redo();
      if (reply[0] === 0) return false;
      keep(event.accountId, partition, encoded.length, redo);
      reader.own(partition, reply[1], { ...event, current: true });
      return true;
    },
    subscribe: (accountId, listener, opts) => reader.subscribe(accountId, listener, opts),
    listenerCount: () => reader.listenerCount(),
    stats: () => reader.stats(),
    whenReading: (accountId) => reader.whenReading(accountId),
    async close() {
      closed = true;
      clearInterval(epochTimer);
      await reader.close();
      // QUIT waits for an answer: with Redis away it would hold the shutdown until Redis returns.
      if (writer.status === 'ready') await writer.quit().catch(() => undefined);
      else writer.disconnect();
    },
  };
}
