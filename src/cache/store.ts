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
import { estimateBytes } from './size.js';

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
  /** What the store holds now, when it can tell at no cost (the memory store). */
  usage?(): StoreUsage;
  close(): Promise<void>;
}

export interface StoreUsage {
  objects: number;
  /** Estimated (size.ts), every caller's copies together. */
  bytes: number;
}

/** The byte bounds of a store: its whole budget (memory only), and one entry's, beyond which a value is simply not kept. */
export interface ByteBounds {
  maxBytes: number;
  maxEntryBytes: number;
}

/** ENTITY_CACHE_MAX_BYTES and ENTITY_CACHE_MAX_ENTRY_BYTES by default. */
export const DEFAULT_BYTE_BOUNDS: ByteBounds = Object.freeze({ maxBytes: 64 * 1024 * 1024, maxEntryBytes: 256 * 1024 });

interface MemoryEntry {
  value: unknown;
  expiresAt: number;
  generation: string | null;
  /** Estimated size of `value`. */
  bytes: number;
}

type Copies = ReadonlyMap<string, MemoryEntry>;

/**
 * One process's store: an LRU of objects (at most `maxObjects`, and at most
 * `maxBytes` of estimated size), each holding the copies of the callers that
 * read it. Values are kept as the decoded objects themselves, so a hit costs
 * no parsing; nothing downstream mutates them. A value over `maxEntryBytes` is
 * not kept: a few huge objects would otherwise push out thousands of small ones.
 */
export function memoryStore(maxObjects: number, now: () => number = Date.now, bounds: ByteBounds = DEFAULT_BYTE_BOUNDS): EntityStore {
  // A copy map is replaced, never changed in place, so that the LRU sizes it again.
  const objects = new LRUCache<string, Copies>({
    max: maxObjects,
    maxSize: bounds.maxBytes,
    sizeCalculation: (copies) => Math.max(1, [...copies.values()].reduce((sum, entry) => sum + entry.bytes, 0)),
  });
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
        const bytes = estimateBytes(value, bounds.maxEntryBytes);
        const copies = new Map(objects.get(key));
        if (bytes > bounds.maxEntryBytes) copies.delete(callerId);
        else copies.set(callerId, { value, expiresAt: at + ttlMs, generation, bytes });
        if (copies.size > 0) objects.set(key, copies);
        else objects.delete(key);
      }
    },
    async evict(kind, ids) {
      for (const id of ids) {
        const key = ref(kind, id);
        generations.set(key, (generations.get(key) ?? 0) + 1);
        objects.delete(key);
      }
    },
    usage: () => ({ objects: objects.size, bytes: objects.calculatedSize }),
    async close() {
      objects.clear();
    },
  };
}
