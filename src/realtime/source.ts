import type { PaymentEvent } from './events.js';
import type { Snapshot, WatchedKind } from './reconciler.js';

/** The caller's live events in a subscription resolver's context (absent over HTTP). */
export interface RealtimeSource {
  accountId: number;
  events<T>(select: (event: PaymentEvent) => T | null): AsyncIterableIterator<T>;
  /** Re-reads one object with the caller's key until the returned function is called, from `current`. */
  reconcile(kind: WatchedKind, current: Snapshot, isFinal: (status: string) => boolean): () => void;
}
