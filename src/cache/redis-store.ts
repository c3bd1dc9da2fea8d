/**
 * The entity store in Redis, shared by every instance (REDIS_URL): one MGET
 * per loader batch. Key layout and what bounds it: docs/architecture.md,
 * Design notes, "The entity cache in Redis".
 */
import type { Redis } from 'ioredis';
import { decode, encode } from '../upstream/index.js';
import type { EntityId, EntityStore } from './store.js';

export interface RedisStoreOptions {
  redis: Redis;
  prefix: string;
  /** Longer than the longest entry TTL. */
  generationTtlMs: number;
  maxEntryBytes: number;
}

interface Stored {
  g: string | null;
  v: unknown;
  /** Written at (epoch ms): a pending object's age is checked on the way out. Absent from older versions' entries. */
  t?: number;
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
      const writtenAt: (number | undefined)[] = [];
      const values = ids.map((_, i) => {
        const text = found[i];
        const stored = text ? (decode(text) as Stored) : undefined;
        const live = stored && stored.g === generations[i] ? stored : undefined;
        writtenAt.push(typeof live?.t === 'number' ? live.t : undefined);
        return live?.v;
      });
      return { values, generations, writtenAt };
    },
    async write(callerId, kind, entries) {
      const pipeline = redis.pipeline();
      const t = Date.now();
      for (const { id, value, ttlMs, generation } of entries) {
        const text = encode({ g: generation, v: value, t } satisfies Stored);
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
