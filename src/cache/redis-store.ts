/**
 * The entity store in Redis, shared by every instance (REDIS_URL): one MGET
 * per loader batch. Key layout and what bounds it: docs/architecture.md,
 * Design notes, "The entity cache in Redis".
 */
import type { RedisClient as Redis } from '../redis.js';
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
  // An object's copies and its generation share one hash tag, so reading them together is one slot on a cluster.
  const entryKey = (callerId: string, kind: string, id: EntityId) => `${prefix}e:{${kind}:${id}}:${callerId}`;
  const genKey = (kind: string, id: EntityId) => `${prefix}g:{${kind}:${id}}`;
  // One server answers a whole batch in one MGET; a cluster, one MGET per object (ioredis pipelines them per node).
  const readPairs = async (callerId: string, kind: string, ids: readonly EntityId[]): Promise<(string | null)[][]> => {
    if (!redis.isCluster) {
      const found = await redis.mget([...ids.map((id) => entryKey(callerId, kind, id)), ...ids.map((id) => genKey(kind, id))]);
      return ids.map((_, i) => [found[i] ?? null, found[ids.length + i] ?? null]);
    }
    return Promise.all(ids.map((id) => redis.mget(entryKey(callerId, kind, id), genKey(kind, id))));
  };
  return {
    shared: true,
    async read(callerId, kind, ids) {
      const pairs = await readPairs(callerId, kind, ids);
      const generations = pairs.map(([, generation]) => generation ?? null);
      const writtenAt: (number | undefined)[] = [];
      const values = pairs.map(([text], i) => {
        const stored = text ? (decode(text) as Stored) : undefined;
        const live = stored && stored.g === generations[i] ? stored : undefined;
        writtenAt.push(typeof live?.t === 'number' ? live.t : undefined);
        return live?.v;
      });
      return { values, generations, writtenAt };
    },
    async write(callerId, kind, entries) {
      const t = Date.now();
      // Too large to keep: an older copy, had one been kept, is not left to be served in its place.
      const writes = entries.map(({ id, value, ttlMs, generation }) => {
        const text = encode({ g: generation, v: value, t } satisfies Stored);
        return { key: entryKey(callerId, kind, id), text: Buffer.byteLength(text) <= maxEntryBytes ? text : null, ttlMs };
      });
      if (writes.length === 0) return;
      // A cluster's pipeline must stay on one node: there each object is its own command (ioredis sends them per node).
      if (redis.isCluster) {
        await Promise.all(writes.map(({ key, text, ttlMs }) => (text === null ? redis.del(key) : redis.set(key, text, 'PX', ttlMs))));
        return;
      }
      const pipeline = redis.pipeline();
      for (const { key, text, ttlMs } of writes) {
        if (text === null) pipeline.del(key);
        else pipeline.set(key, text, 'PX', ttlMs);
      }
      await pipeline.exec();
    },
    async evict(kind, ids) {
      // One transaction per object: its two commands touch one key, so one slot.
      await Promise.all(
        ids.map(async (id) => {
          const results = await redis.multi().incr(genKey(kind, id)).pexpire(genKey(kind, id), generationTtlMs).exec();
          const failed = results?.find(([error]) => error);
          if (!results || failed) throw failed?.[0] ?? new Error('cache eviction was not applied');
        }),
      );
    },
    async close() {
      redis.disconnect();
    },
  };
}
