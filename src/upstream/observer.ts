/**
 * What the client tells whoever watches it (metrics, traces, logs), without
 * knowing who that is: the gateway attaches one observer at start
 * (`UpstreamClient.observe`). Everything here is low-cardinality on purpose:
 * a route is its method and path template, never a URL with ids in it.
 */
import type { ConnectionReason } from './errors.js';

/** One attempt of one call, about to be sent. */
export interface AttemptStart {
  method: string;
  /** Path template, e.g. `/v1/customers/:id`. */
  pattern: string;
  /** 1 for the first attempt, 2 for the first retry... */
  attempt: number;
  /** The operation the call belongs to, as its observer gave it (`OperationScope.observed`). */
  operation: unknown;
}

/** How an attempt ended: the upstream's status, or why there was none. */
export type AttemptResult =
  | { status: number }
  | { failure: 'connection'; reason: ConnectionReason }
  | { failure: 'timeout' | 'aborted' | 'other' };

export interface AttemptWatch {
  /** Extra headers for this attempt (trace context). */
  headers: Record<string, string>;
  /** Called exactly once. */
  end(result: AttemptResult): void;
}

export interface UpstreamObserver {
  attempt(start: AttemptStart): AttemptWatch;
  /** A failed attempt will be sent again after a backoff. */
  retry(route: string): void;
  /** A retry was wanted and the key's retry budget on the route refused it. */
  retryBudgetExhausted(route: string): void;
}

/** Per route: breaker state and bulkhead occupancy, read when metrics are scraped. */
export interface RouteStats {
  state: 'closed' | 'open' | 'half_open';
  inFlight: number;
  queued: number;
}
