/**
 * The delivery ledger of a gateway without Redis, on local disk: the memory ledger's rules over a byte-bounded
 * cache with a share per account, each record written to an LMDB file in the data folder before the delivery is
 * answered, and read back at start. So a provider's redelivery after a restart is still a duplicate, and an older
 * version still out of order. Why, and what a container without a volume loses: docs/deployment.md.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { FairCache } from '../graphql/fair-cache.js';
import { isNewer, type Version } from './events.js';
import { DEDUPE_TTL_SECONDS, LAST_SEEN_TTL_SECONDS, SNAPSHOT_EVENT_ID, type DeliveryLedger } from './ledger.js';

export const LEDGER_FILE = 'webhook-ledger.mdb';

export interface DiskLedgerBounds {
  /** WEBHOOK_LEDGER_MAX_BYTES: every account's records together, estimated as held in memory (the larger cost). */
  maxBytes: number;
  /** WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES: one account's; over it, its own oldest records go, never another's. */
  accountMaxBytes: number;
}

/** A claimed event (`c:` key) or an object's latest version and the one it replaced (`v:` key). */
interface Held {
  /** Written at (ms): the least recently written go first, also after a restart. */
  at: number;
  expiresAt: number;
  version?: Version;
  previous?: Version | null;
}

/**
 * What a record costs beside its key, measured (250,000 records, heap after GC): the in-memory copy is
 * the larger cost, about 530 bytes a claim and 710 a version; on disk a delivery (one of each) takes about 260.
 */
const CLAIM_OVERHEAD_BYTES = 512;
const VERSION_OVERHEAD_BYTES = 680;

const claimKey = (accountId: number, eventId: number) => `c:${accountId}:${eventId}`;
const versionKey = (objectKey: string) => `v:${objectKey}`;
/** A record's owner is its account: an object key starts with it (events.ts `objectKey`). */
const ownerOf = (key: string) => key.slice(2, key.indexOf(':', 2));
const bytesOf = (key: string, held: Held) => key.length + (held.version ? VERSION_OVERHEAD_BYTES : CLAIM_OVERHEAD_BYTES);

export class DiskLedger implements DeliveryLedger {
  private readonly held: FairCache<string, Held>;

  private constructor(
    private readonly db: RootDatabase<Held, string>,
    bounds: DiskLedgerBounds,
  ) {
    this.held = new FairCache<string, Held>({
      maxBytes: bounds.maxBytes,
      callerShare: Math.min(1, bounds.accountMaxBytes / bounds.maxBytes),
      // One left behind (a crash before it went) is swept at the next start, by the same bound.
      onDrop: (key) => void this.db.remove(key).catch(() => undefined),
    });
  }

  /** Creates `dir` if needed, and reads back what a previous process kept, oldest first. */
  static open(dir: string, bounds: DiskLedgerBounds): DiskLedger {
    mkdirSync(dir, { recursive: true });
    const db = open<Held, string>({ path: path.join(dir, LEDGER_FILE) });
    const ledger = new DiskLedger(db, bounds);
    const now = Date.now();
    const kept: [string, Held][] = [];
    const expired: string[] = [];
    for (const { key, value } of db.getRange()) {
      if (value.expiresAt > now) kept.push([key, value]);
      else expired.push(key);
    }
    if (expired.length > 0) db.transactionSync(() => expired.forEach((key) => db.removeSync(key)));
    kept.sort((a, b) => a[1].at - b[1].at);
    for (const [key, value] of kept) ledger.held.set(key, value, bytesOf(key, value), ownerOf(key));
    return ledger;
  }

  get bytes(): number {
    return this.held.bytes;
  }

  async claim(accountId: number, eventId: number): Promise<boolean> {
    const key = claimKey(accountId, eventId);
    if (this.read(key)) return false;
    await this.write(key, { expiresAt: Date.now() + DEDUPE_TTL_SECONDS * 1000 });
    return true;
  }

  async release(accountId: number, eventId: number): Promise<void> {
    await this.remove(claimKey(accountId, eventId));
  }

  async advance(objectKey: string, version: Version): Promise<boolean> {
    const key = versionKey(objectKey);
    const last = this.read(key);
    if (last?.version && !isNewer(version, last.version)) return false;
    await this.write(key, { version, previous: last?.version ?? null, expiresAt: Date.now() + LAST_SEEN_TTL_SECONDS * 1000 });
    return true;
  }

  async retreat(objectKey: string, version: Version): Promise<void> {
    const key = versionKey(objectKey);
    const held = this.read(key);
    const last = held?.version;
    if (!last || last[0] !== version[0] || last[1] !== version[1]) return;
    const previous = held.previous;
    if (previous) await this.write(key, { version: previous, previous: null, expiresAt: Date.now() + LAST_SEEN_TTL_SECONDS * 1000 });
    else await this.remove(key);
  }

  async advanceTo(objectKey: string, updatedAtMs: number): Promise<boolean> {
    const key = versionKey(objectKey);
    const last = this.read(key);
    if (last?.version && updatedAtMs <= last.version[0]) return false;
    await this.write(key, { version: [updatedAtMs, SNAPSHOT_EVENT_ID], previous: last?.version ?? null, expiresAt: Date.now() + LAST_SEEN_TTL_SECONDS * 1000 });
    return true;
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private read(key: string): Held | undefined {
    const held = this.held.get(key);
    if (held && held.expiresAt <= Date.now()) {
      void this.remove(key).catch(() => undefined);
      return undefined;
    }
    return held;
  }

  /** Kept on disk before it counts: a write that fails leaves the ledger as it was, and the delivery is refused. */
  private async write(key: string, record: Omit<Held, 'at'>): Promise<void> {
    const held: Held = { ...record, at: Date.now() };
    const before = this.held.get(key);
    this.held.set(key, held, bytesOf(key, held), ownerOf(key));
    try {
      await this.db.put(key, held);
    } catch (error) {
      if (before) this.held.set(key, before, bytesOf(key, before), ownerOf(key));
      else this.held.delete(key);
      throw error;
    }
  }

  private async remove(key: string): Promise<void> {
    this.held.delete(key);
    await this.db.remove(key);
  }
}
