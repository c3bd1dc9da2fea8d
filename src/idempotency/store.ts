/**
 * Idempotency records: one per (caller, idempotency key), holding the
 * fingerprint of the input it was first used with and, once the mutation has
 * run, its result as JSON.
 *
 *   (none) --claim--> running --complete--> done   (kept ttlMs: replayed)
 *                        |
 *                        +------release---> open   (kept ttlMs: same input may claim again)
 *
 * A running record expires after its lock time, so a crashed owner never
 * blocks a key for good. `open` keeps the fingerprint so a key stays bound to
 * its first input even after a failed attempt.
 */
import { LRUCache } from 'lru-cache';

export type Claim =
  | { kind: 'acquired'; owner: string }
  | { kind: 'completed'; json: string }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

export interface IdempotencyStore {
  /** Takes the record for this fingerprint, or says what holds it. */
  claim(recordKey: string, fingerprint: string, lockMs: number): Promise<Claim>;
  /** Stores the result; false when the lock was lost to another owner (nothing is overwritten). */
  complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number): Promise<boolean>;
  /** After a failure: the key stays bound to its fingerprint, and the same input may run again. */
  release(recordKey: string, owner: string, fingerprint: string, ttlMs: number): Promise<void>;
  /** Resolves when the record may have changed, or after `ms` at most. */
  changed(recordKey: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The stored shape, shared by both stores (Redis keeps it as JSON). */
export interface RecordBody {
  /** running | done | open */
  s: 'running' | 'done' | 'open';
  fp: string;
  owner?: string;
  /** The result as JSON (done only). */
  v?: string;
}

/**
 * One process's records; fine for a single instance, REDIS_URL for several.
 * Bounded: past `maxRecords` the least recently used record goes first (in
 * practice an old completed one), so a flood of keys cannot exhaust memory.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records: LRUCache<string, RecordBody>;
  private readonly waiters = new Map<string, Set<() => void>>();
  private seq = 0;

  constructor(maxRecords = 100_000) {
    // Every set passes its own ttl (lock time or retention); expired records read as absent.
    this.records = new LRUCache<string, RecordBody>({ max: maxRecords, ttl: 1 });
  }

  async claim(recordKey: string, fingerprint: string, lockMs: number): Promise<Claim> {
    const current = this.read(recordKey);
    if (current) {
      if (current.fp !== fingerprint) return { kind: 'mismatch' };
      if (current.s === 'done') return { kind: 'completed', json: current.v ?? 'null' };
      if (current.s === 'running') return { kind: 'in_progress' };
    }
    const owner = `${process.pid}-${++this.seq}`;
    this.records.set(recordKey, { s: 'running', fp: fingerprint, owner }, { ttl: lockMs });
    return { kind: 'acquired', owner };
  }

  async complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number): Promise<boolean> {
    const current = this.read(recordKey);
    if (current && current.owner !== owner) return false;
    this.records.set(recordKey, { s: 'done', fp: fingerprint, v: json }, { ttl: ttlMs });
    this.notify(recordKey);
    return true;
  }

  async release(recordKey: string, owner: string, fingerprint: string, ttlMs: number): Promise<void> {
    const current = this.read(recordKey);
    if (!current || current.owner !== owner) return;
    this.records.set(recordKey, { s: 'open', fp: fingerprint }, { ttl: ttlMs });
    this.notify(recordKey);
  }

  changed(recordKey: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(recordKey) ?? new Set();
      this.waiters.set(recordKey, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(recordKey);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
    });
  }

  async close(): Promise<void> {
    for (const set of this.waiters.values()) for (const wake of [...set]) wake();
  }

  get size(): number {
    return this.records.size;
  }

  private read(recordKey: string): RecordBody | undefined {
    return this.records.get(recordKey);
  }

  private notify(recordKey: string): void {
    for (const wake of [...(this.waiters.get(recordKey) ?? [])]) wake();
  }
}
