/** Deliveries remembered: event ids taken (delivery is at least once) and each object's latest version (unordered). */
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
export const SNAPSHOT_EVENT_ID = Number.MAX_SAFE_INTEGER;

/** Upstream retries span minutes to hours; a day covers them. */
export const DEDUPE_TTL_SECONDS = 24 * 60 * 60;
export const LAST_SEEN_TTL_SECONDS = 24 * 60 * 60;

interface Seen {
  version: Version;
  previous: Version | null;
}

export function memoryLedger(maxEntries = 100_000): DeliveryLedger {
  // Counted through maxSize, not max: with max, lru-cache allocates every slot up front (about 10 MB here).
  const bound = { maxSize: maxEntries, sizeCalculation: () => 1 };
  const claimed = new LRUCache<string, true>({ ...bound, ttl: DEDUPE_TTL_SECONDS * 1000 });
  const lastSeen = new LRUCache<string, Seen>({ ...bound, ttl: LAST_SEEN_TTL_SECONDS * 1000 });
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

/**
 * The ordering record in Lua, for the event log's scripts (redis-log.ts), which advance it in the same script as
 * the append: with Redis that is the ledger (the memory and disk ledgers above are one instance's). A version is `<updatedAtMs>:<eventId>`, written from the arguments' text (a Lua number
 * would print a 16-digit id in exponent form).
 */
export const LEDGER_LUA = `
local function version_of(cur)
  local sep = string.find(cur, ':', 1, true)
  return tonumber(string.sub(cur, 1, sep - 1)), tonumber(string.sub(cur, sep + 1))
end
local function is_newer(cur, ms, id)
  if not cur then return true end
  local cms, cid = version_of(cur)
  return ms > cms or (ms == cms and id > cid)
end
local function is_later(cur, ms)
  if not cur then return true end
  local cms = version_of(cur)
  return ms > cms
end
local function record_version(last, ms, id, ttl)
  redis.call('SET', last, ms .. ':' .. id, 'EX', ttl)
end
`;
