import type { PaymentEvent } from './events.js';
import type { Snapshot, WatchedKind } from './reconciler.js';

/** What a subscription resolver gets in its context: the caller's live events (absent over HTTP). */
export interface RealtimeSource {
  /** The caller's account: the only one whose events reach this connection. */
  accountId: number;
  events<T>(select: (event: PaymentEvent) => T | null): AsyncIterableIterator<T>;
  /**
   * Keeps one object re-read from the upstream (src/realtime/reconciler.ts)
   * with the caller's key until the returned function is called, starting
   * from `current`, a state the caller just read (shared with the object's
   * other subscribers when it is news to them).
   */
  reconcile(kind: WatchedKind, current: Snapshot, isFinal: (status: string) => boolean): () => void;
}
