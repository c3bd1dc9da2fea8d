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
import { NOT_KEPT } from './result.js';

export type Claim =
  | { kind: 'acquired'; owner: string }
  | { kind: 'completed'; json: string }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' }
  /** No room for a new record without dropping one that is still young (memory store at capacity). */
  | { kind: 'full' };

/** What a record says without taking it. */
export type Peek = { kind: 'none' } | { kind: 'completed'; json: string } | { kind: 'in_progress' } | { kind: 'mismatch' };

/** The shared reading of a record for a fingerprint (both stores). */
export function peekRecord(current: RecordBody | undefined, fingerprint: string): Peek {
  if (!current) return { kind: 'none' };
  if (current.fp !== fingerprint) return { kind: 'mismatch' };
  if (current.s === 'done') return { kind: 'completed', json: current.v ?? 'null' };
  if (current.s === 'running') return { kind: 'in_progress' };
  return { kind: 'none' };
}

export interface IdempotencyStore {
  /** Reads the record for this fingerprint without taking it. */
  peek(recordKey: string, fingerprint: string, caller: string): Promise<Peek>;
  /**
   * Takes the record for this fingerprint, or says what holds it. `caller`
   * bounds records per API key: past its quota a caller's own oldest record
   * goes, never another caller's.
   */
  claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim>;
  /** Stores the result; false when the lock was lost to another owner (nothing is overwritten). */
  complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number, caller: string): Promise<boolean>;
  /** After a failure: the key stays bound to its fingerprint, and the same input may run again. */
  release(recordKey: string, owner: string, fingerprint: string, ttlMs: number, caller: string): Promise<void>;
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

/** Records one caller may hold at once in either store (a flood of keys evicts only the flooder's own). */
export const DEFAULT_RECORDS_PER_CALLER = 10_000;
/** Bytes of stored results one caller may hold: big results evict only the caller's own older records. */
export const DEFAULT_BYTES_PER_CALLER = 8 * 1024 * 1024;
/** Bytes of stored results the memory store holds in all; past it the heaviest caller's oldest finished records go. */
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
/** What a record costs besides its result: key, fingerprint, owner, map entries. */
const RECORD_OVERHEAD_BYTES = 256;

const sizeOf = (record: RecordBody): number => RECORD_OVERHEAD_BYTES + (record.v?.length ?? 0) * 2;

/**
 * One process's records; fine for a single instance, REDIS_URL for several.
 * Bounded by count and by bytes: each caller holds at most `perCaller` records
 * and `bytesPerCaller` of them (past that its own least recently used ones
 * go), and the store at most `maxRecords` and `maxBytes`. A full store makes
 * room from the heaviest caller (by bytes, or by count when that is the bound
 * reached): its least recently used finished record goes, so however many
 * callers sit at their quota a newcomer is never refused. Only running records
 * are never dropped (their owner may still be writing upstream): a store full
 * of running records refuses (`full`).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly byCaller = new Map<string, LRUCache<string, RecordBody>>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private seq = 0;
  /** Bytes held by every caller's records (kept by each cache's dispose). */
  private bytes = 0;
  /** A full store is swept for expired records at most once a second: a sweep walks every record. */
  private purgedAt = 0;

  constructor(
    private readonly maxRecords = 100_000,
    private readonly perCaller = DEFAULT_RECORDS_PER_CALLER,
    private readonly bytesPerCaller = DEFAULT_BYTES_PER_CALLER,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  async peek(recordKey: string, fingerprint: string, caller: string): Promise<Peek> {
    return peekRecord(this.byCaller.get(caller)?.get(recordKey), fingerprint);
  }

  async claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim> {
    let records = this.recordsOf(caller);
    const current = records.get(recordKey);
    if (current) {
      if (current.fp !== fingerprint) return { kind: 'mismatch' };
      if (current.s === 'done') return { kind: 'completed', json: current.v ?? 'null' };
      if (current.s === 'running') return { kind: 'in_progress' };
    } else if (records.size < this.perCaller) {
      if (!this.makeRoom(null)) return { kind: 'full' };
      // Making room sweeps away empty callers, this one's fresh map too: take it again, registered.
      records = this.recordsOf(caller);
    }
    const owner = `${process.pid}-${++this.seq}`;
    // At its quota the caller's own least recently used record goes (LRU eviction within its map).
    this.put(records, recordKey, { s: 'running', fp: fingerprint, owner }, lockMs);
    return { kind: 'acquired', owner };
  }

  async complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number, caller: string): Promise<boolean> {
    const records = this.byCaller.get(caller);
    const current = records?.get(recordKey);
    if (!records || (current && current.owner !== owner)) return false;
    // A result the caller's whole quota could not hold is not kept, but the key stays taken: no second write.
    const v = sizeOf({ s: 'done', fp: fingerprint, v: json }) > this.bytesPerCaller ? NOT_KEPT : json;
    this.put(records, recordKey, { s: 'done', fp: fingerprint, v }, ttlMs);
    // The result grew the store: room is made now, never from the record just written.
    this.makeRoom(recordKey);
    this.notify(recordKey);
    return true;
  }

  async release(recordKey: string, owner: string, fingerprint: string, ttlMs: number, caller: string): Promise<void> {
    const records = this.byCaller.get(caller);
    const current = records?.get(recordKey);
    if (!records || !current || current.owner !== owner) return;
    this.put(records, recordKey, { s: 'open', fp: fingerprint }, ttlMs);
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
    let n = 0;
    for (const records of this.byCaller.values()) n += records.size;
    return n;
  }

  private recordsOf(caller: string): LRUCache<string, RecordBody> {
    let records = this.byCaller.get(caller);
    if (!records) {
      // Every set passes its own ttl (lock time or retention); expired records read as absent.
      records = new LRUCache<string, RecordBody>({
        max: this.perCaller,
        ttl: 1,
        maxSize: this.bytesPerCaller,
        sizeCalculation: sizeOf,
        // Called for every stored record that leaves: evicted, expired, deleted or overwritten (see put).
        dispose: (record) => {
          this.bytes -= sizeOf(record);
        },
      });
      this.byCaller.set(caller, records);
    }
    return records;
  }

  /** Bytes the store holds now (results and per-record overhead). */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Cheap upper bound first: with few callers the store cannot be full by count. */
  private overCapacity(): boolean {
    if (this.bytes >= this.maxBytes) return true;
    return this.byCaller.size * this.perCaller >= this.maxRecords && this.size >= this.maxRecords;
  }

  /**
   * Drops the least recently used finished record of the heaviest caller until the store is within its
   * bounds; false when only running records (or `keep`) are left to drop.
   */
  private makeRoom(keep: string | null): boolean {
    if (!this.overCapacity()) return true;
    this.purgeExpired();
    const drained = new Set<LRUCache<string, RecordBody>>();
    while (this.overCapacity()) {
      const byBytes = this.bytes >= this.maxBytes;
      let heaviest: LRUCache<string, RecordBody> | undefined;
      let most = -1;
      for (const records of this.byCaller.values()) {
        const weight = byBytes ? records.calculatedSize : records.size;
        if (weight > most && !drained.has(records)) [heaviest, most] = [records, weight];
      }
      if (!heaviest) return false;
      if (!dropOldestFinished(heaviest, keep)) drained.add(heaviest);
    }
    return true;
  }

  private purgeExpired(): void {
    if (Date.now() - this.purgedAt < 1_000) return;
    this.purgedAt = Date.now();
    for (const [caller, records] of this.byCaller) {
      records.purgeStale();
      if (records.size === 0) this.byCaller.delete(caller);
    }
  }

  /** Stores a record and counts its bytes once it is in (a record over the caller's byte quota is not kept). */
  private put(records: LRUCache<string, RecordBody>, recordKey: string, record: RecordBody, ttl: number): void {
    records.set(recordKey, record, { ttl });
    if (records.peek(recordKey) === record) this.bytes += sizeOf(record);
  }

  private notify(recordKey: string): void {
    for (const wake of [...(this.waiters.get(recordKey) ?? [])]) wake();
  }
}

/** Deletes the caller's least recently used record that is not running (nor `keep`); false when there is none. */
function dropOldestFinished(records: LRUCache<string, RecordBody>, keep: string | null): boolean {
  for (const key of records.rkeys()) {
    if (key !== keep && records.peek(key)?.s !== 'running') return records.delete(key);
  }
  return false;
}
