/**
 * What every subscription transport (graphql-ws, graphql-sse) shares: the
 * account behind a caller's key, asked upstream once and cached, and the
 * RealtimeSource a subscription resolver reads its events from.
 */
import { LRUCache } from 'lru-cache';
import type { Caller } from '../auth.js';
import type { ContextDeps } from '../context.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../realtime/bus.js';
import type { Reconciler } from '../realtime/reconciler.js';
import type { RealtimeSource } from '../realtime/source.js';
import { boundedStream } from '../realtime/stream.js';

const ACCOUNT_TTL_MS = 10 * 60_000;

/** The caller's account id; a failed look-up is forgotten, so the next connection asks again. */
export function accountLookup(context: ContextDeps): (caller: Caller) => Promise<number> {
  const accounts = new LRUCache<string, Promise<number>>({ max: 10_000, ttl: ACCOUNT_TTL_MS });
  return (caller) => {
    let pending = accounts.get(caller.callerId);
    if (!pending) {
      // The connection's own call, not an operation's: no deadline but the upstream time-out.
      pending = context.upstream.forKey(caller.apiKey).accounts.current().then((a) => a.id);
      pending.catch(() => accounts.delete(caller.callerId));
      accounts.set(caller.callerId, pending);
    }
    return pending;
  };
}

export interface SourceOptions {
  bus: EventBus;
  reconciler: Reconciler;
  logger: Logger;
  caller: Caller;
  accountId: number;
  queueLimit: number;
  /** Extra pressure signal besides the queue: the transport's unsent bytes. */
  isCongested(): boolean;
  onOverflow(): void;
  /** Called before each event is handed out (fresh loaders per event). */
  beforeEach(): void;
}

export function realtimeSource(o: SourceOptions): RealtimeSource {
  return {
    accountId: o.accountId,
    events: (select) =>
      boundedStream({
        bus: o.bus,
        accountId: o.accountId,
        select,
        limit: o.queueLimit,
        isCongested: o.isCongested,
        onOverflow: o.onOverflow,
        beforeEach: o.beforeEach,
      }),
    reconcile: (kind, current, isFinal) => {
      o.reconciler.observe(o.accountId, kind, current).catch((error: unknown) => {
        o.logger.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'current state not shared: ledger or bus failed');
      });
      return o.reconciler.watch({ accountId: o.accountId, kind, id: current.id, apiKey: o.caller.apiKey, isFinal });
    },
  };
}
