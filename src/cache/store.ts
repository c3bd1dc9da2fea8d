/**
 * Where cached entities live: the raw store under the entity cache
 * (index.ts holds the rules of what may be cached and for how long).
 *
 * Entries are kept per object and per caller (`callerId`, a hash of the API
 * key), so one key never reads what another key cached. Eviction is per
 * object, for every caller at once: a webhook names the object, not the key.
 *
 * A read that misses returns the object's generation; the entry written
 * after the upstream answered carries it, and an eviction bumps it. An
 * eviction that lands while the upstream call is in flight therefore makes
 * the late write unreadable, instead of letting an older snapshot back in.
 */
import { LRUCache } from 'lru-cache';

export type EntityId = string | number;

export interface StoreRead {
  /** Per id: the cached value, or `undefined` on a miss (absent, expired or evicted since written). */
  values: unknown[];
  /** Per id: the object's generation now, to hand back to `write`. */
  generations: (string | null)[];
}

export interface StoreEntry {
  id: EntityId;
  value: unknown;
  ttlMs: number;
  /** The generation `read` returned before the value was fetched. */
  generation: string | null;
}

export interface EntityStore {
  readonly shared: boolean;
  read(callerId: string, kind: string, ids: readonly EntityId[]): Promise<StoreRead>;
  write(callerId: string, kind: string, entries: readonly StoreEntry[]): Promise<void>;
  /** Every caller's copy of these objects is gone once this resolves. */
  evict(kind: string, ids: readonly EntityId[]): Promise<void>;
  close(): Promise<void>;
}

interface MemoryEntry {
  value: unknown;
  expiresAt: number;
  generation: string | null;
}

/**
 * One process's store: an LRU of objects (at most `maxObjects`), each holding
 * the copies of the callers that read it. Values are kept as the decoded
 * objects themselves, so a hit costs no parsing; nothing downstream mutates them.
 */
export function memoryStore(maxObjects: number, now: () => number = Date.now): EntityStore {
  const objects = new LRUCache<string, Map<string, MemoryEntry>>({ max: maxObjects });
  // Generations outlive the objects they guard: bounded too, but far larger.
  const generations = new LRUCache<string, number>({ max: maxObjects * 4 });
  const ref = (kind: string, id: EntityId) => `${kind}:${id}`;
  const generationOf = (key: string) => {
    const g = generations.get(key);
    return g === undefined ? null : String(g);
  };
  return {
    shared: false,
    async read(callerId, kind, ids) {
      const at = now();
      const values: unknown[] = [];
      const gens: (string | null)[] = [];
      for (const id of ids) {
        const key = ref(kind, id);
        const entry = objects.get(key)?.get(callerId);
        values.push(entry && entry.expiresAt > at ? entry.value : undefined);
        gens.push(generationOf(key));
      }
      return { values, generations: gens };
    },
    async write(callerId, kind, entries) {
      const at = now();
      for (const { id, value, ttlMs, generation } of entries) {
        const key = ref(kind, id);
        // Evicted since it was read: this snapshot may predate the change.
        if (generationOf(key) !== generation) continue;
        let copies = objects.get(key);
        if (!copies) objects.set(key, (copies = new Map()));
        copies.set(callerId, { value, expiresAt: at + ttlMs, generation });
      }
    },
    async evict(kind, ids) {
      for (const id of ids) {
        const key = ref(kind, id);
        generations.set(key, (generations.get(key) ?? 0) + 1);
        objects.delete(key);
      }
    },
    async close() {
      objects.clear();
    },
  };
}
