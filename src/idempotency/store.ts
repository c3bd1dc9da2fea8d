/**
 * One record per (caller, key): the input's fingerprint and, once run, the result. States and why:
 * docs/architecture.md, Idempotency records.
 */
import { LRUCache } from 'lru-cache';
import { NOT_KEPT } from './result.js';

export type Claim =
  | { kind: 'acquired'; owner: string }
  | { kind: 'completed'; json: string }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' }
  | { kind: 'full' };

export type Peek = { kind: 'none' } | { kind: 'completed'; json: string } | { kind: 'in_progress' } | { kind: 'mismatch' };

export function peekRecord(current: RecordBody | undefined, fingerprint: string): Peek {
  if (!current) return { kind: 'none' };
  if (current.fp !== fingerprint) return { kind: 'mismatch' };
  if (current.s === 'done') return { kind: 'completed', json: current.v ?? 'null' };
  if (current.s === 'running') return { kind: 'in_progress' };
  return { kind: 'none' };
}

export interface IdempotencyStore {
  peek(recordKey: string, fingerprint: string, caller: string): Promise<Peek>;
  /** Past its quota a caller's own oldest record goes, never another caller's. */
  claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim>;
  /** False when the lock was lost to another owner (nothing is overwritten). */
  complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number, caller: string): Promise<boolean>;
  /** The key stays bound to its fingerprint; the same input may run again. */
  release(recordKey: string, owner: string, fingerprint: string, ttlMs: number, caller: string): Promise<void>;
  changed(recordKey: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

export interface RecordBody {
  s: 'running' | 'done' | 'open';
  fp: string;
  owner?: string;
  v?: string;
}

/** Per-caller bounds in either store: a flood of keys evicts only the flooder's own records. */
export const DEFAULT_RECORDS_PER_CALLER = 10_000;
export const DEFAULT_BYTES_PER_CALLER = 8 * 1024 * 1024;
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const RECORD_OVERHEAD_BYTES = 256;

const sizeOf = (record: RecordBody): number => RECORD_OVERHEAD_BYTES + (record.v?.length ?? 0) * 2;

/**
 * One process's records, bounded per caller and in all; a full store drops the heaviest caller's oldest finished
 * record, so a newcomer is never refused. Running records are never dropped (their owner may be writing upstream).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly byCaller = new Map<string, LRUCache<string, RecordBody>>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private seq = 0;
  private bytes = 0;
  /** A sweep walks every record: at most once a second. */
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
      records = new LRUCache<string, RecordBody>({
        max: this.perCaller,
        ttl: 1,
        maxSize: this.bytesPerCaller,
        sizeCalculation: sizeOf,
        dispose: (record) => {
          this.bytes -= sizeOf(record);
        },
      });
      this.byCaller.set(caller, records);
    }
    return records;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  private overCapacity(): boolean {
    if (this.bytes >= this.maxBytes) return true;
    return this.byCaller.size * this.perCaller >= this.maxRecords && this.size >= this.maxRecords;
  }

  /** False when only running records (or `keep`) are left to drop. */
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

  private put(records: LRUCache<string, RecordBody>, recordKey: string, record: RecordBody, ttl: number): void {
    records.set(recordKey, record, { ttl });
    if (records.peek(recordKey) === record) this.bytes += sizeOf(record);
  }

  private notify(recordKey: string): void {
    for (const wake of [...(this.waiters.get(recordKey) ?? [])]) wake();
  }
}

function dropOldestFinished(records: LRUCache<string, RecordBody>, keep: string | null): boolean {
  for (const key of records.rkeys()) {
    if (key !== keep && records.peek(key)?.s !== 'running') return records.delete(key);
  }
  return false;
}
