/**
 * Records on local disk, for a gateway without Redis: the memory store's rules, each record also written to an
 * LMDB file in the data folder before its state is acted on, and read back at start. So a retry after a crash or a
 * deploy replays its answer. Why and what a container without a volume loses: docs/deployment.md.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { MemoryIdempotencyStore, type HeldRecord, type RecordJournal } from './store.js';
import { alive } from '../data-lock.js';

export interface DiskStoreBounds {
  maxRecords?: number;
  perCaller?: number;
  bytesPerCaller?: number;
  maxBytes?: number;
}

/** The process that holds the folder, under a key no record has (a record's key is its caller's hash, `/`, its own). */
const HOLDER_KEY = '!holder';

export class DiskIdempotencyStore extends MemoryIdempotencyStore {
  private constructor(
    private readonly db: RootDatabase<HeldRecord | number, string>,
    bounds: DiskStoreBounds,
  ) {
    super(bounds.maxRecords, bounds.perCaller, bounds.bytesPerCaller, bounds.maxBytes, journalOf(db));
  }

  /**
   * Creates `dir` if needed. `shared` hears of another live process in the same folder: LMDB keeps the file whole,
   * but each process sees only the records it read at start and its own, so a retry sent to the other may act again.
   */
  static open(dir: string, bounds: DiskStoreBounds = {}, shared?: (pid: number) => void): DiskIdempotencyStore {
    mkdirSync(dir, { recursive: true });
    const db = open<HeldRecord | number, string>({ path: path.join(dir, 'idempotency.mdb') });
    const holder = db.get(HOLDER_KEY);
    if (typeof holder === 'number' && holder !== process.pid && alive(holder)) shared?.(holder);
    db.putSync(HOLDER_KEY, process.pid);
    const store = new DiskIdempotencyStore(db, bounds);
    const now = Date.now();
    for (const { key, value } of db.getRange()) {
      if (key === HOLDER_KEY || typeof value === 'number') continue;
      if (value.expiresAt > now) store.restore(key, value);
      else db.removeSync(key);
    }
    return store;
  }

  override async close(): Promise<void> {
    await super.close();
    // One write transaction: its read is current (a plain read may be a snapshot from before another process took the
    // folder), and nobody takes the folder between the read and the removal.
    this.db.transactionSync(() => {
      if (this.db.get(HOLDER_KEY) === process.pid) this.db.removeSync(HOLDER_KEY);
    });
    await this.db.close();
  }
}

function journalOf(db: RootDatabase<HeldRecord | number, string>): RecordJournal {
  return {
    async write(id, record) {
      await db.put(id, record);
    },
    remove(id) {
      // One left behind is swept at the next start.
      db.remove(id).catch(() => undefined);
    },
  };
}

