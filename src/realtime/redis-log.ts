/**
 * The event log in Redis Streams (docs/realtime.md, The event log): one stream per partition of accounts, each
 * entry appended by one script together with its ledger record and a wake-up on the partition's channel, and read
 * by the instances whose listeners need that partition, each from its own last position (log-reader.ts), so a
 * reconnect or a Redis restarted from its append-only file resumes where it stopped. The instance that appends
 * hands the event to its own subscribers at once; its reader skips that entry when it comes by.
 */
import type { Logger } from '../logger.js';
import type { RedisClient, RedisLinks, RedisTarget } from '../redis.js';
import { encode } from '../upstream/index.js';
import type { EventBus } from './bus.js';
import { objectKey, versionOf } from './events.js';
import { DEDUPE_TTL_SECONDS, LAST_SEEN_TTL_SECONDS, LEDGER_LUA, SNAPSHOT_EVENT_ID } from './ledger.js';
import type { AppendResult, EventLog } from './log.js';
import { LOG_PARTITIONS, logKeys, partitionOf } from './log-keys.js';
import { startLogReader, type EventLogStats } from './log-reader.js';

export type { EventLogStats } from './log-reader.js';

/**
 * Each entry carries its partition's sequence number (`s`), so a reader sees a gap: entries trimmed before it read
 * them. Read, then written after the append, so a failed append leaves no gap.
 */
const SEQUENCE_LUA = `
local function next_seq(key) return (tonumber(redis.call('GET', key)) or 0) + 1 end
`;

/**
 * The wake-up: the entry itself on the partition's channel (named as its stream), for the readers of that partition
 * only, as `<id>\n<sequence>\n<current>\n<entry>` (log-reader.ts takes it without a read when nothing came between).
 * Sharded (`SPUBLISH`, one node's) on a Cluster; plain `PUBLISH` on one server, which any version has.
 */
type Wake = 'SPUBLISH' | 'PUBLISH';

/** KEYS: claim, last, prev, stream, sequence. ARGV: ms, event id, ttl, maxlen, entry, has an object. Returns {0} or {1|2, id}. */
const appendEvent = (wake: Wake) => `${LEDGER_LUA}${SEQUENCE_LUA}
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
redis.call('${wake}', KEYS[4], at .. '\\n' .. seq .. '\\n' .. current .. '\\n' .. ARGV[5])
redis.call('SET', KEYS[1], '1', 'EX', ARGV[3])
if current == 1 and ARGV[6] == '1' then record_version(KEYS[2], KEYS[3], cur, ARGV[1], ARGV[2], ARGV[3]) end
return {current + 1, at}
`;

/** KEYS: last, stream, sequence. ARGV: ms, snapshot id, ttl, maxlen, entry. Returns {0} or {1, id}. */
const appendSnapshot = (wake: Wake) => `${LEDGER_LUA}${SEQUENCE_LUA}
if not is_later(redis.call('GET', KEYS[1]), tonumber(ARGV[1])) then return {0} end
local seq = next_seq(KEYS[3])
local at = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'c', 1, 's', seq, 'e', ARGV[5])
redis.call('SET', KEYS[3], seq)
redis.call('${wake}', KEYS[2], at .. '\\n' .. seq .. '\\n1\\n' .. ARGV[5])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return {1, at}
`;

type Reply = [0] | [1 | 2, string];

interface LogScripts {
  appendEvent(claim: string, last: string, prev: string, stream: string, sequence: string, ms: number, id: number, ttl: number, maxLen: number, entry: string, hasObject: string): Promise<Reply>;
  appendSnapshot(last: string, stream: string, sequence: string, ms: number, id: number, ttl: number, maxLen: number, entry: string): Promise<Reply>;
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
  // Two connections for the reader's role: one reads, the other is in subscriber mode for the wake-ups.
  const readerLink = links.open(options.target, 'bus-subscriber');
  const sharded = options.target.mode === 'cluster';
  const waker = links.open(options.target, 'bus-subscriber', { sharded });
  await Promise.all([writer.connect(), readerLink.connect(), waker.connect()]);
  const wake: Wake = sharded ? 'SPUBLISH' : 'PUBLISH';
  writer.defineCommand('appendEvent', { numberOfKeys: 5, lua: appendEvent(wake) });
  writer.defineCommand('appendSnapshot', { numberOfKeys: 3, lua: appendSnapshot(wake) });
  const scripts = writer as unknown as LogScripts;
  const reader = await startLogReader({ keys, reader: readerLink, waker, sharded, logger });

  return {
    redis: writer,
    async append(event): Promise<AppendResult> {
      const partition = partitionOf(event.accountId, partitions);
      const key = event.objectId === null ? `${event.accountId}:none` : objectKey(event.accountId, event.object, event.objectId);
      const [ms, id] = versionOf(event);
      const reply = await scripts.appendEvent(keys.claim(event.accountId, event.id), keys.last(key), keys.prev(key), keys.stream(partition), keys.sequence(partition), ms, id, DEDUPE_TTL_SECONDS, maxLen, encode(event), event.objectId === null ? '0' : '1');
      if (reply[0] === 0) return 'duplicate';
      const current = reply[0] === 2;
      reader.own(partition, reply[1], { ...event, current });
      return current ? 'accepted' : 'out_of_order';
    },
    async appendSnapshot(event, updatedAtMs) {
      if (event.objectId === null) return false;
      const partition = partitionOf(event.accountId, partitions);
      const { current: _current, ...entry } = event;
      const reply = await scripts.appendSnapshot(keys.last(objectKey(event.accountId, event.object, event.objectId)), keys.stream(partition), keys.sequence(partition), updatedAtMs, SNAPSHOT_EVENT_ID, LAST_SEEN_TTL_SECONDS, maxLen, encode(entry));
      if (reply[0] === 0) return false;
      reader.own(partition, reply[1], { ...event, current: true });
      return true;
    },
    subscribe: (accountId, listener, opts) => reader.subscribe(accountId, listener, opts),
    listenerCount: () => reader.listenerCount(),
    stats: () => reader.stats(),
    whenReading: (accountId) => reader.whenReading(accountId),
    async close() {
      await reader.close();
      // QUIT waits for an answer: with Redis away it would hold the shutdown until Redis returns.
      if (writer.status === 'ready') await writer.quit().catch(() => undefined);
      else writer.disconnect();
    },
  };
}
