/**
 * The raw store under the entity cache. A miss returns the object's generation and the later
 * write carries it, so an eviction during the upstream call makes that older snapshot unreadable.
 */
import { LRUCache } from 'lru-cache';
import { estimateBytes } from './size.js';

export type EntityId = string | number;

export interface StoreRead {
  /** `undefined` on a miss. */
  values: unknown[];
  generations: (string | null)[];
  /** When each value found was written (epoch ms); `undefined` when the writer did not say (an older version's entry). */
  writtenAt?: (number | undefined)[];
}

export interface StoreEntry {
  id: EntityId;
  value: unknown;
  ttlMs: number;
  generation: string | null;
}

export interface EntityStore {
  readonly shared: boolean;
  read(callerId: string, kind: string, ids: readonly EntityId[]): Promise<StoreRead>;
  write(callerId: string, kind: string, entries: readonly StoreEntry[]): Promise<void>;
  evict(kind: string, ids: readonly EntityId[]): Promise<void>;
  /** Only where it costs nothing (the memory store). */
  usage?(): StoreUsage;
  close(): Promise<void>;
}

export interface StoreUsage {
  objects: number;
  bytes: number;
}

/** `maxBytes` bounds the memory store; a value over `maxEntryBytes` is not kept. */
export interface ByteBounds {
  maxBytes: number;
  maxEntryBytes: number;
}

export const DEFAULT_BYTE_BOUNDS: ByteBounds = Object.freeze({ maxBytes: 64 * 1024 * 1024, maxEntryBytes: 256 * 1024 });

interface MemoryEntry {
  value: unknown;
  writtenAt: number;
  expiresAt: number;
  generation: string | null;
  bytes: number;
}

type Copies = ReadonlyMap<string, MemoryEntry>;

/** Values are the decoded objects (nothing downstream mutates them); a huge one would push out thousands of small ones. */
export function memoryStore(maxObjects: number, now: () => number = Date.now, bounds: ByteBounds = DEFAULT_BYTE_BOUNDS): EntityStore {
  // A copy map is replaced, never changed in place, so that the LRU sizes it again.
  const objects = new LRUCache<string, Copies>({
    max: maxObjects,
    maxSize: bounds.maxBytes,
    sizeCalculation: (copies) => Math.max(1, [...copies.values()].reduce((sum, entry) => sum + entry.bytes, 0)),
  });
  // Generations outlive the objects they guard: bounded too, but far larger. Counted through maxSize, not
  // max: with max, lru-cache allocates every slot up front (about 5 MB at the default bound).
  const generations = new LRUCache<string, number>({ maxSize: maxObjects * 4, sizeCalculation: () => 1 });
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
      const writtenAt: (number | undefined)[] = [];
      for (const id of ids) {
        const key = ref(kind, id);
        const entry = objects.get(key)?.get(callerId);
        const live = entry && entry.expiresAt > at ? entry : undefined;
        values.push(live?.value);
        writtenAt.push(live?.writtenAt);
        gens.push(generationOf(key));
      }
      return { values, generations: gens, writtenAt };
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
        else copies.set(callerId, { value, writtenAt: at, expiresAt: at + ttlMs, generation, bytes });
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
