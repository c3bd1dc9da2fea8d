/**
 * The event log's contract: a verified webhook or a re-read snapshot is kept (and handed to this instance's
 * subscribers) together with its ledger record, or neither is. The webhook sender's 2xx waits on it.
 * Without Redis: the delivery ledger and the local bus, below; with Redis: redis-log.ts.
 */
import type { MemoryBus } from './bus.js';
import { objectKey, versionOf, type PaymentEvent } from './events.js';
import { SNAPSHOT_EVENT_ID, type DeliveryLedger } from './ledger.js';

/** `out_of_order`: kept and delivered as an event, with `current: false` (a later version was seen first). */
export type AppendResult = 'accepted' | 'out_of_order' | 'duplicate';

export interface EventLog {
  /** Rejects when nothing was kept: no claim taken, no version advanced, so a redelivery is taken whole. */
  append(event: Omit<PaymentEvent, 'current'>): Promise<AppendResult>;
  /** A re-read object: kept only when strictly later than every version seen (`DeliveryLedger.advanceTo`). */
  appendSnapshot(event: PaymentEvent, updatedAtMs: number): Promise<boolean>;
}

/** One instance: the ledger's record, then the local fan-out; a failed fan-out undoes the record. */
export function ledgerLog(ledger: DeliveryLedger, bus: Pick<MemoryBus, 'publish'>): EventLog {
  return {
    async append(event) {
      if (!(await ledger.claim(event.accountId, event.id))) return 'duplicate';
      const key = event.objectId === null ? null : objectKey(event.accountId, event.object, event.objectId);
      const version = versionOf(event);
      let advanced = false;
      try {
        const current = key === null ? true : (advanced = await ledger.advance(key, version));
        await bus.publish({ ...event, current });
        return current ? 'accepted' : 'out_of_order';
      } catch (error) {
        // The version first, so a redelivery that passes the claim finds it undone.
        if (advanced && key !== null) await ledger.retreat(key, version).catch(() => undefined);
        await ledger.release(event.accountId, event.id).catch(() => undefined);
        throw error;
      }
    },
    async appendSnapshot(event, updatedAtMs) {
      if (event.objectId === null) return false;
      const key = objectKey(event.accountId, event.object, event.objectId);
      if (!(await ledger.advanceTo(key, updatedAtMs))) return false;
      try {
        await bus.publish(event);
      } catch (error) {
        await ledger.retreat(key, [updatedAtMs, SNAPSHOT_EVENT_ID]).catch(() => undefined);
        throw error;
      }
      return true;
    },
  };
}
