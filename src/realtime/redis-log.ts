/**
 * The event log in Redis Streams (docs/realtime.md, The event log): one stream per partition of accounts, each
 * entry appended by one script together with its ledger record, and read by every instance from its own last
 * position, so a reconnect or a Redis restarted from its append-only file resumes where it stopped. The instance
 * that appends hands the event to its own subscribers at once; its reader skips that entry when it comes by.
 */

import type { Logger } from '../logger.js';
import type { RedisClient, RedisLinks, RedisTarget } from '../redis.js';
import { decode, encode } from '../upstream/index.js';
import { Fanout, type EventBus } from './bus.js';
import { objectKey, versionOf, type PaymentEvent } from './events.js';
import { DEDUPE_TTL_SECONDS, LAST_SEEN_TTL_SECONDS, LEDGER_LUA, SNAPSHOT_EVENT_ID, redisLedger, type DeliveryLedger } from './ledger.js';
import type { AppendResult, EventLog } from './log.js';
import { LOG_PARTITIONS, logKeys, partitionOf } from './log-keys.js';

/** KEYS: claim, last, prev, stream. ARGV: ms, event id, ttl, maxlen, entry, has an object. Returns {0} or {1|2, id}. */
const APPEND_EVENT = `${LEDGER_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local current = 1
local cur = false
if ARGV[6] == '1' then
  cur = redis.call('GET', KEYS[2])
  if not is_newer(cur, tonumber(ARGV[1]), tonumber(ARGV[2])) then current = 0 end
end
local at = redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'c', current, 'e', ARGV[5])
redis.call('SET', KEYS[1], '1', 'EX', ARGV[3])
if current == 1 and ARGV[6] == '1' then record_version(KEYS[2], KEYS[3], cur, ARGV[1], ARGV[2], ARGV[3]) end
return {current + 1, at}
`;

/** KEYS: last, stream. ARGV: ms, snapshot id, ttl, maxlen, entry. Returns {0} or {1, id}. */
const APPEND_SNAPSHOT = `${LEDGER_LUA}
if not is_later(redis.call('GET', KEYS[1]), tonumber(ARGV[1])) then return {0} end
local at = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'c', 1, 'e', ARGV[5])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return {1, at}
`;

type Reply = [0] | [1 | 2, string];

interface LogScripts {
  appendEvent(claim: string, last: string, prev: string, stream: string, ms: number, id: number, ttl: number, maxLen: number, entry: string, hasObject: string): Promise<Reply>;
  appendSnapshot(last: string, stream: string, ms: number, id: number, ttl: number, maxLen: number, entry: string): Promise<Reply>;
}

/** Stream ids are `<ms>-<seq>`, growing within a stream. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am - bm || as - bs;
}

/** Entries this instance delivered itself and its reader has not yet passed; more than this and the oldest go. */
const OWN_MAX = 100_000;
const READ_COUNT = 500;
const READ_BLOCK_MS = 5_000;

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
  ledger: DeliveryLedger;
  stats(): { appended: number; read: number; gaps: number };
}

export async function redisEventLog(options: RedisLogOptions): Promise<RedisEventLog> {
  const { logger, links, prefix } = options;
  const partitions = options.partitions ?? LOG_PARTITIONS;
  const keys = logKeys(prefix, partitions);
  const maxLen = Math.ceil(options.maxEvents / partitions);
  const writer = links.open(options.target, 'bus-publisher');
  const reader = links.open(options.target, 'bus-subscriber');
  await Promise.all([writer.connect(), reader.connect()]);
  writer.defineCommand('appendEvent', { numberOfKeys: 4, lua: APPEND_EVENT });
  writer.defineCommand('appendSnapshot', { numberOfKeys: 2, lua: APPEND_SNAPSHOT });
  const scripts = writer as unknown as LogScripts;

  const fanout = new Fanout(logger);
  const streams = Array.from({ length: partitions }, (_, p) => keys.stream(p));
  // From each stream's newest entry: what came before this instance started is no subscriber's here.
  const positions = await Promise.all(streams.map(async (stream) => (await writer.xrevrange(stream, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0'));
  const own = streams.map(() => new Set<string>());
  const counters = { appended: 0, read: 0, gaps: 0 };
  let closed = false;

  const deliverOwn = (partition: number, at: string, event: PaymentEvent) => {
    counters.appended += 1;
    // The reader got there first (its reply came before the script's): it delivered the entry already.
    if (compareIds(at, positions[partition]!) <= 0) return;
    const set = own[partition]!;
    set.add(at);
    if (set.size > OWN_MAX) set.delete(set.values().next().value!);
    fanout.deliver(event);
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

  // After a reconnect: entries trimmed past this instance's position were never delivered here.
  let checkGaps = false;
  reader.on('ready', () => void (checkGaps = true));
  const findGaps = async () => {
    checkGaps = false;
    const infos = await Promise.all(streams.map((stream) => reader.xinfo('STREAM', stream).catch(() => null)));
    const behind = infos.flatMap((info, p) => {
      if (!Array.isArray(info)) return [];
      const at = info.indexOf('max-deleted-entry-id');
      const deleted = at >= 0 ? String(info[at + 1]) : '0-0';
      return compareIds(deleted, positions[p]!) > 0 ? [p] : [];
    });
    if (behind.length === 0) return;
    counters.gaps += 1;
    logger.error(
      { partitions: behind },
      'event log trimmed past this instance: events it never read are gone for its subscribers (those with an id catch up by re-reads; paymentEvent by resuming with after); raise EVENT_LOG_MAX_EVENTS',
    );
  };

  const readLoop = async () => {
    while (!closed) {
      try {
        if (checkGaps) await findGaps();
        const reply = await reader.xread('COUNT', READ_COUNT, 'BLOCK', READ_BLOCK_MS, 'STREAMS', ...streams, ...positions);
        for (const [stream, entries] of reply ?? []) {
          const p = streams.indexOf(stream);
          if (p < 0) continue;
          const set = own[p]!;
          for (const [id, fields] of entries) {
            positions[p] = id;
            if (set.delete(id)) continue;
            counters.read += 1;
            const event = fromEntry(fields);
            if (event) fanout.deliver(event);
            else logger.warn({ stream, id }, 'unreadable entry in the event log');
          }
          for (const id of set) if (compareIds(id, positions[p]!) <= 0) set.delete(id);
        }
      } catch {
        // Redis away: ioredis reconnects; the next read starts from the same positions.
        if (!closed) await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  const reading = readLoop();

  return {
    redis: writer,
    ledger: redisLedger(writer, prefix, partitions),
    async append(event): Promise<AppendResult> {
      const partition = partitionOf(event.accountId, partitions);
      const key = event.objectId === null ? `${event.accountId}:none` : objectKey(event.accountId, event.object, event.objectId);
      const [ms, id] = versionOf(event);
      const reply = await scripts.appendEvent(keys.claim(event.accountId, event.id), keys.last(key), keys.prev(key), keys.stream(partition), ms, id, DEDUPE_TTL_SECONDS, maxLen, encode(event), event.objectId === null ? '0' : '1');
      if (reply[0] === 0) return 'duplicate';
      const current = reply[0] === 2;
      deliverOwn(partition, reply[1], { ...event, current });
      return current ? 'accepted' : 'out_of_order';
    },
    async appendSnapshot(event, updatedAtMs) {
      if (event.objectId === null) return false;
      const partition = partitionOf(event.accountId, partitions);
      const { current: _current, ...entry } = event;
      const reply = await scripts.appendSnapshot(keys.last(objectKey(event.accountId, event.object, event.objectId)), keys.stream(partition), updatedAtMs, SNAPSHOT_EVENT_ID, LAST_SEEN_TTL_SECONDS, maxLen, encode(entry));
      if (reply[0] === 0) return false;
      deliverOwn(partition, reply[1], { ...event, current: true });
      return true;
    },
    subscribe: (accountId, listener, opts) => fanout.subscribe(accountId, listener, opts),
    listenerCount: () => fanout.size,
    stats: () => ({ ...counters }),
    async close() {
      closed = true;
      reader.disconnect();
      await reading;
      await writer.quit().catch(() => undefined);
    },
  };
}
