import type { PaymentEvent } from './events.js';

/** What a subscription resolver gets in its context: the caller's live events (absent over HTTP). */
export interface RealtimeSource {
  /** The caller's account: the only one whose events reach this connection. */
  accountId: number;
  events<T>(select: (event: PaymentEvent) => T | null): AsyncIterableIterator<T>;
}
