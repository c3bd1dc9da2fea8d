/**
 * What the client tells whoever watches it (metrics, traces), low-cardinality on purpose: a route
 * is its method and path template, never a URL with ids in it.
 */
import type { ConnectionReason } from './errors.js';

export interface AttemptStart {
  method: string;
  /** Path template, e.g. `/v1/customers/:id`. */
  pattern: string;
  attempt: number;
  /** The operation the call belongs to, as its observer gave it (`OperationScope.observed`). */
  operation: unknown;
}

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
  retry(route: string): void;
  /** A retry was wanted and the key's retry budget on the route refused it. */
  retryBudgetExhausted(route: string): void;
}

export interface RouteStats {
  state: 'closed' | 'open' | 'half_open';
  inFlight: number;
  queued: number;
}
