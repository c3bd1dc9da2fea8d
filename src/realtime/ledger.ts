/** Deliveries remembered: event ids taken (delivery is at least once) and each object's latest version (unordered). */
import type { RedisClient as Redis } from '../redis.js';
import { LRUCache } from 'lru-cache';
import { isNewer, type Version } from './events.js';

export interface DeliveryLedger {
  claim(accountId: number, eventId: number): Promise<boolean>;
  /** So a redelivery of an event we failed to publish is taken again. */
  release(accountId: number, eventId: number): Promise<void>;
  advance(objectKey: string, version: Version): Promise<boolean>;
  /** Undoes an unpublished event's advance while it is still the latest, so its redelivery counts as current. */
  retreat(objectKey: string, version: Version): Promise<void>;
  /**
   * A re-read snapshot: news only when strictly later than every version seen, and recorded above every event id of
   * that instant, so the same state's webhook arriving later is not news either.
   */
  advanceTo(objectKey: string, updatedAtMs: number): Promise<boolean>;
}

/** Above any real event id, so the same instant never counts twice. */
const SNAPSHOT_EVENT_ID = Number.MAX_SAFE_INTEGER;

/** Upstream retries span minutes to hours; a day covers them. */
const DEDUPE_TTL_SECONDS = 24 * 60 * 60;
const LAST_SEEN_TTL_SECONDS = 24 * 60 * 60;

interface Seen {
  version: Version;
  previous: Version | null;
}

export function memoryLedger(maxEntries = 100_000): DeliveryLedger {
  const claimed = new LRUCache<string, true>({ max: maxEntries, ttl: DEDUPE_TTL_SECONDS * 1000 });
  const lastSeen = new LRUCache<string, Seen>({ max: maxEntries, ttl: LAST_SEEN_TTL_SECONDS * 1000 });
  return {
    async claim(accountId, eventId) {
      const key = `${accountId}:${eventId}`;
      if (claimed.get(key)) return false;
      claimed.set(key, true);
      return true;
    },
    async release(accountId, eventId) {
      claimed.delete(`${accountId}:${eventId}`);
    },
    async advance(objectKey, version) {
      const last = lastSeen.get(objectKey);
      if (last && !isNewer(version, last.version)) return false;
      lastSeen.set(objectKey, { version, previous: last?.version ?? null });
      return true;
    },
    async retreat(objectKey, version) {
      const last = lastSeen.get(objectKey);
      if (!last || last.version[0] !== version[0] || last.version[1] !== version[1]) return;
      if (last.previous) lastSeen.set(objectKey, { version: last.previous, previous: null });
      else lastSeen.delete(objectKey);
    },
    async advanceTo(objectKey, updatedAtMs) {
      const last = lastSeen.get(objectKey);
      if (last && updatedAtMs <= last.version[0]) return false;
      lastSeen.set(objectKey, { version: [updatedAtMs, SNAPSHOT_EVENT_ID], previous: last?.version ?? null });
      return true;
    },
  };
}

/** Atomic, so two instances cannot both advance; the first key keeps its format for the previous version's instances. */
const ADVANCE_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
local ms = tonumber(ARGV[1])
local id = tonumber(ARGV[2])
if cur then
  local sep = string.find(cur, ':', 1, true)
  local cms = tonumber(string.sub(cur, 1, sep - 1))
  local cid = tonumber(string.sub(cur, sep + 1))
  if ms < cms or (ms == cms and id <= cid) then return 0 end
  redis.call('SET', KEYS[2], cur, 'EX', ARGV[3])
else
  redis.call('DEL', KEYS[2])
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return 1
`;

const RETREAT_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local prev = redis.call('GET', KEYS[2])
if prev then
  redis.call('SET', KEYS[1], prev, 'EX', ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
redis.call('DEL', KEYS[2])
return 1
`;

const ADVANCE_TO_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
local ms = tonumber(ARGV[1])
if cur then
  local sep = string.find(cur, ':', 1, true)
  if ms <= tonumber(string.sub(cur, 1, sep - 1)) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'EX', ARGV[3])
return 1
`;

export function redisLedger(redis: Redis, prefix: string): DeliveryLedger {
  const claimKey = (accountId: number, eventId: number) => `${prefix}event:${accountId}:${eventId}`;
  return {
    async claim(accountId, eventId) {
      return (await redis.set(claimKey(accountId, eventId), '1', 'EX', DEDUPE_TTL_SECONDS, 'NX')) === 'OK';
    },
    async release(accountId, eventId) {
      await redis.del(claimKey(accountId, eventId));
    },
    async advance(objectKey, version) {
      const result = await redis.eval(ADVANCE_SCRIPT, 2, `${prefix}last:${objectKey}`, `${prefix}prev:${objectKey}`, version[0], version[1], LAST_SEEN_TTL_SECONDS);
      return result === 1;
    },
    async retreat(objectKey, version) {
      await redis.eval(RETREAT_SCRIPT, 2, `${prefix}last:${objectKey}`, `${prefix}prev:${objectKey}`, `${version[0]}:${version[1]}`, LAST_SEEN_TTL_SECONDS);
    },
    async advanceTo(objectKey, updatedAtMs) {
      const result = await redis.eval(ADVANCE_TO_SCRIPT, 1, `${prefix}last:${objectKey}`, updatedAtMs, SNAPSHOT_EVENT_ID, LAST_SEEN_TTL_SECONDS);
      return result === 1;
    },
  };
}
