/**
 * The entity store in Redis, shared by every instance (REDIS_URL). One
 * round trip per loader batch: MGET of the entries and of their objects'
 * generations. Key layout (the caller is a hash of the key, never the key):
 *
 *   <prefix>e:<kind>:<id>:<callerId>  {"g": generation, "v": entity}, with the entry's TTL
 *   <prefix>g:<kind>:<id>             generation, INCR on every eviction
 *
 * An eviction is one INCR per object: every caller's copy still carries the
 * old generation and reads as a miss. A generation key lives longer than any
 * entry (`generationTtlMs`), so an entry never outlives the eviction that
 * made it stale.
 *
 * An entry whose text passes `maxEntryBytes` is not written. What bounds
 * Redis as a whole is its own `maxmemory` (docs/security.md): every entry
 * carries a TTL, so `volatile-ttl` drops cache entries (an hour at most)
 * before the longer-lived idempotency records.
 */
import type { Redis } from 'ioredis';
import { decode, encode } from '../upstream/index.js';
import type { EntityId, EntityStore } from './store.js';

export interface RedisStoreOptions {
  redis: Redis;
  prefix: string;
  /** Longer than the longest entry TTL. */
  generationTtlMs: number;
  /** An entry whose encoded text is longer than this, in bytes, is not written. */
  maxEntryBytes: number;
}

interface Stored {
  g: string | null;
  v: unknown;
}

export function redisStore({ redis, prefix, generationTtlMs, maxEntryBytes }: RedisStoreOptions): EntityStore {
  const entryKey = (callerId: string, kind: string, id: EntityId) => `${prefix}e:${kind}:${id}:${callerId}`;
  const genKey = (kind: string, id: EntityId) => `${prefix}g:${kind}:${id}`;
  return {
    shared: true,
    async read(callerId, kind, ids) {
      const keys = [...ids.map((id) => entryKey(callerId, kind, id)), ...ids.map((id) => genKey(kind, id))];
      const found = await redis.mget(keys);
      const generations = ids.map((_, i) => found[ids.length + i] ?? null);
      const values = ids.map((_, i) => {
        const text = found[i];
        if (!text) return undefined;
        const stored = decode(text) as Stored;
        return stored.g === generations[i] ? stored.v : undefined;
      });
      return { values, generations };
    },
    async write(callerId, kind, entries) {
      const pipeline = redis.pipeline();
      for (const { id, value, ttlMs, generation } of entries) {
        const text = encode({ g: generation, v: value } satisfies Stored);
        // Too large to keep: an older copy, had one been kept, is not left to be served in its place.
        if (Buffer.byteLength(text) <= maxEntryBytes) pipeline.set(entryKey(callerId, kind, id), text, 'PX', ttlMs);
        else pipeline.del(entryKey(callerId, kind, id));
      }
      if (pipeline.length > 0) await pipeline.exec();
    },
    async evict(kind, ids) {
      if (ids.length === 0) return;
      const multi = redis.multi();
      for (const id of ids) multi.incr(genKey(kind, id)).pexpire(genKey(kind, id), generationTtlMs);
      const results = await multi.exec();
      const failed = results?.find(([error]) => error);
      if (!results || failed) throw failed?.[0] ?? new Error('cache eviction was not applied');
    },
    async close() {
      redis.disconnect();
    },
  };
}
