/**
 * A byte-bounded cache of what callers send, each caller holding at most a share: over it, its own least recently
 * used entries go, never another's (docs/security.md, What callers send is kept in bytes).
 */
import { LRUCache } from 'lru-cache';

export interface FairCacheOptions {
  maxBytes: number;
  /** 0 to 1 of `maxBytes`. */
  callerShare: number;
}

interface Entry<V> {
  value: V;
  bytes: number;
  owner: string;
}

interface Holding<K> {
  bytes: number;
  /** Least recently used first (a Set keeps insertion order). */
  keys: Set<K>;
}

export class FairCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  /** An entry estimated over it is not kept at all. */
  readonly perCaller: number;
  private readonly entries: LRUCache<K, Entry<V>>;
  private readonly holdings = new Map<string, Holding<K>>();

  private readonly onDrop: ((key: K) => void) | undefined;

  /** `onDrop` hears of each entry the cache lets go by itself (the whole's bound, its owner's share): a copy kept elsewhere goes too. */
  constructor(options: FairCacheOptions & { onDrop?: (key: K) => void }) {
    this.onDrop = options.onDrop;
    this.perCaller = Math.max(0, Math.floor(options.maxBytes * Math.min(1, Math.max(0, options.callerShare))));
    this.entries = new LRUCache<K, Entry<V>>({
      maxSize: Math.max(1, options.maxBytes),
      sizeCalculation: (entry) => entry.bytes,
      // Every way out (evicted by the whole, dropped by its owner's share, replaced) gives the owner its bytes back.
      dispose: (entry, key, reason) => {
        this.release(entry, key);
        if (reason === 'evict') this.onDrop?.(key);
      },
    });
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const holding = this.holdings.get(entry.owner);
    if (holding) {
      holding.keys.delete(key);
      holding.keys.add(key);
    }
    return entry.value;
  }

  set(key: K, value: V, bytes: number, owner: string): boolean {
    this.entries.delete(key);
    const size = Math.max(1, Math.ceil(bytes));
    if (size > this.perCaller) return false;
    let holding = this.holdings.get(owner);
    if (!holding) this.holdings.set(owner, (holding = { bytes: 0, keys: new Set() }));
    for (const oldest of holding.keys) {
      if (holding.bytes + size <= this.perCaller) break;
      this.entries.delete(oldest);
      this.onDrop?.(oldest);
    }
    // release() may have dropped an emptied holding: charge the one in the map.
    if (!this.holdings.has(owner)) this.holdings.set(owner, holding);
    holding.bytes += size;
    holding.keys.add(key);
    this.entries.set(key, { value, bytes: size, owner });
    return true;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get size(): number {
    return this.entries.size;
  }

  bytesOf(owner: string): number {
    return this.holdings.get(owner)?.bytes ?? 0;
  }

  private release(entry: Entry<V>, key: K): void {
    const holding = this.holdings.get(entry.owner);
    if (!holding || !holding.keys.delete(key)) return;
    holding.bytes -= entry.bytes;
    if (holding.keys.size === 0) this.holdings.delete(entry.owner);
  }
}
