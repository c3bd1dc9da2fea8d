/**
 * One record per (caller, key): the input's fingerprint and, once run, the result. States and why:
 * docs/architecture.md, Idempotency records.
 */
import { randomBytes } from 'node:crypto';
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

/** What `/readyz` and the metrics show of a store that may have lost records (Redis): none for the others. */
export interface StoreCondition {
  /** Epoch ms until which new claims are refused, or null. */
  quarantinedUntil: number | null;
  /** Times this instance found records lost since it started. */
  losses: number;
  reason: string | null;
}

export interface IdempotencyStore {
  peek(recordKey: string, fingerprint: string, caller: string): Promise<Peek>;
  /** `full` when the store cannot keep one more record: the claim is refused, no record is dropped for it. */
  claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim>;
  /** False when the lock was lost to another owner (nothing is overwritten). */
  complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number, caller: string): Promise<boolean>;
  /** The key stays bound to its fingerprint; the same input may run again. */
  release(recordKey: string, owner: string, fingerprint: string, ttlMs: number, caller: string): Promise<void>;
  changed(recordKey: string, ms: number): Promise<void>;
  condition?(): StoreCondition | undefined;
  close(): Promise<void>;
}

export interface RecordBody {
  s: 'running' | 'done' | 'open';
  fp: string;
  owner?: string;
  v?: string;
}

/** A record as the memory store holds it (and the disk store writes it). */
export interface HeldRecord {
  caller: string;
  body: RecordBody;
  /** Epoch ms. */
  expiresAt: number;
}

/** Where a store's records also go, so they outlive the process (`disk-store.ts`). */
export interface RecordJournal {
  /** Resolves once the record is kept. */
  write(id: string, record: HeldRecord): Promise<void>;
  remove(id: string): void;
}

/** Per-caller bounds in either store: a flood of keys fills only the flooder's own share. */
export const DEFAULT_RECORDS_PER_CALLER = 10_000;
export const DEFAULT_BYTES_PER_CALLER = 8 * 1024 * 1024;
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
export const RECORD_OVERHEAD_BYTES = 256;

/** A running claim, an open key and a result not kept all cost the overhead alone: a claim reserves its marker. */
export const sizeOf = (record: RecordBody): number =>
  RECORD_OVERHEAD_BYTES + (record.v === undefined || record.v === NOT_KEPT ? 0 : record.v.length * 2);

interface Usage {
  bytes: number;
  records: number;
}

/**
 * One process's records, bounded per caller and in all. Nothing is dropped before it expires: a claim the bounds
 * cannot hold is refused (`full`), and a result they cannot hold is kept as a marker (`NOT_KEPT`) in the bytes its
 * claim reserved. Why: docs/security.md, Idempotency records.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, HeldRecord>();
  private readonly usage = new Map<string, Usage>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Owners stay unique across restarts of a store whose records outlive the process. */
  private readonly ownerPrefix = randomBytes(6).toString('hex');
  private seq = 0;
  private bytes = 0;
  /** A sweep walks every record: at most once a second. */
  private purgedAt = 0;

  constructor(
    private readonly maxRecords = 100_000,
    private readonly perCaller = DEFAULT_RECORDS_PER_CALLER,
    private readonly bytesPerCaller = DEFAULT_BYTES_PER_CALLER,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
    private readonly journal?: RecordJournal,
  ) {}

  /** A record kept before a restart: taken whatever the bounds (it is never forgotten), counted against them. */
  restore(id: string, record: HeldRecord): void {
    this.place(id, record);
  }

  async peek(recordKey: string, fingerprint: string, caller: string): Promise<Peek> {
    return peekRecord(this.live(idOf(caller, recordKey))?.body, fingerprint);
  }

  async claim(recordKey: string, fingerprint: string, lockMs: number, caller: string): Promise<Claim> {
    const id = idOf(caller, recordKey);
    const current = this.live(id)?.body;
    if (current) {
      if (current.fp !== fingerprint) return { kind: 'mismatch' };
      if (current.s === 'done') return { kind: 'completed', json: current.v ?? 'null' };
      if (current.s === 'running') return { kind: 'in_progress' };
    }
    const owner = `${this.ownerPrefix}-${++this.seq}`;
    const record: HeldRecord = { caller, body: { s: 'running', fp: fingerprint, owner }, expiresAt: Date.now() + lockMs };
    if (!this.fits(id, record)) return { kind: 'full' };
    this.place(id, record);
    try {
      await this.journal?.write(id, record);
    } catch (error) {
      // Not kept on disk: not taken at all, so a restart cannot find a claim nobody knows of.
      if (this.records.get(id) === record) this.drop(id);
      throw error;
    }
    return { kind: 'acquired', owner };
  }

  async complete(recordKey: string, owner: string, fingerprint: string, json: string, ttlMs: number, caller: string): Promise<boolean> {
    const id = idOf(caller, recordKey);
    // Its own claim, even past its lock when nobody took the key meanwhile: the write happened.
    if (this.records.get(id)?.body.owner !== owner) return false;
    const expiresAt = Date.now() + ttlMs;
    let record: HeldRecord = { caller, body: { s: 'done', fp: fingerprint, v: json }, expiresAt };
    // A result the bounds cannot hold is not kept, but the key stays taken in its claim's bytes: no second write.
    if (!this.fits(id, record)) {
      record = { caller, body: { s: 'done', fp: fingerprint, v: NOT_KEPT }, expiresAt };
      // Its claim swept meanwhile (past its lock): the marker needs room of its own.
      if (!this.records.has(id) && !this.within(id, record)) return false;
    }
    this.place(id, record);
    this.notify(recordKey);
    await this.journal?.write(id, record);
    return true;
  }

  async release(recordKey: string, owner: string, fingerprint: string, ttlMs: number, caller: string): Promise<void> {
    const id = idOf(caller, recordKey);
    if (this.live(id)?.body.owner !== owner) return;
    const record: HeldRecord = { caller, body: { s: 'open', fp: fingerprint }, expiresAt: Date.now() + ttlMs };
    this.place(id, record);
    this.notify(recordKey);
    await this.journal?.write(id, record);
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

  /** Records held, expired ones not yet swept included. */
  get size(): number {
    return this.records.size;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  /** Whether `record` in place of what `id` holds stays within every bound (sweeping expired records if not). */
  private fits(id: string, record: HeldRecord): boolean {
    if (this.within(id, record)) return true;
    this.purgeExpired();
    return this.within(id, record);
  }

  private within(id: string, record: HeldRecord): boolean {
    const old = this.records.get(id);
    const usage = this.usage.get(record.caller) ?? { bytes: 0, records: 0 };
    const added = old ? 0 : 1;
    const grown = sizeOf(record.body) - (old ? sizeOf(old.body) : 0);
    return (
      usage.records + added <= this.perCaller &&
      this.records.size + added <= this.maxRecords &&
      usage.bytes + grown <= this.bytesPerCaller &&
      this.bytes + grown <= this.maxBytes
    );
  }

  private live(id: string): HeldRecord | undefined {
    const record = this.records.get(id);
    return record && record.expiresAt > Date.now() ? record : undefined;
  }

  private place(id: string, record: HeldRecord): void {
    if (this.records.has(id)) this.drop(id, false);
    this.records.set(id, record);
    const usage = this.usage.get(record.caller) ?? { bytes: 0, records: 0 };
    const bytes = sizeOf(record.body);
    usage.bytes += bytes;
    usage.records += 1;
    this.usage.set(record.caller, usage);
    this.bytes += bytes;
  }

  private drop(id: string, forget = true): void {
    const record = this.records.get(id)!;
    this.records.delete(id);
    const bytes = sizeOf(record.body);
    this.bytes -= bytes;
    const usage = this.usage.get(record.caller)!;
    usage.bytes -= bytes;
    usage.records -= 1;
    if (usage.records === 0) this.usage.delete(record.caller);
    if (forget) this.journal?.remove(id);
  }

  private purgeExpired(): void {
    const now = Date.now();
    if (now - this.purgedAt < 1_000) return;
    this.purgedAt = now;
    for (const [id, record] of this.records) if (record.expiresAt <= now) this.drop(id);
  }

  private notify(recordKey: string): void {
    for (const wake of [...(this.waiters.get(recordKey) ?? [])]) wake();
  }
}

/** The caller is part of the id: two callers' equal record keys never meet. (No NUL: LMDB's keys split on it.) */
export function idOf(caller: string, recordKey: string): string {
  return `${caller}/${recordKey}`;
}
