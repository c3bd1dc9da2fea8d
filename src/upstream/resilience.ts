/**
 * The resilience rules' settings and state, which call.ts applies to each
 * call in order: per-route circuit breakers (opossum, for their state), a
 * concurrency cap with a bounded wait queue, retries with exponential
 * backoff and full jitter, `Retry-After`, a retry budget, and the
 * operation's deadline.
 *
 * One key's failures stay its own (key-health.ts): each key has its own
 * breaker and retry budget per route, and a failure counts against the
 * route's shared breaker only when failures are spread over several keys.
 *
 * Retries happen only when the caller says the call is safe to repeat (a read,
 * or a write carrying an idempotency key the upstream honours), and only for
 * transient failures: time-outs, connection failures, 5xx and 429.
 */
import CircuitBreaker from 'opossum';
import {
  UpstreamConnectionError,
  UpstreamRateLimitError,
  UpstreamServerError,
  UpstreamTimeoutError,
} from './errors.js';
import { Bulkhead } from './bulkhead.js';
import { KeyGuards, RouteHealth } from './key-health.js';
import type { RouteStats } from './observer.js';
import { RetryBudget } from './retry-budget.js';

export { Bulkhead, RetryBudget };

export interface RetryOptions {
  /** Attempts per call, the first one included; 1 disables retries. */
  maxAttempts: number;
  /** Backoff before retry n is uniform in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the 429 is answered at once. */
  maxRetryAfterMs: number;
  /** Retry tokens earned per first attempt; a retry costs one token (per key and route). */
  budgetRatio: number;
  /** Tokens a key starts with and can hold at most, on each route. */
  budgetCapacity: number;
}

export interface BreakerOptions {
  /** Failure share over the rolling window that opens the breaker. */
  errorThresholdPercentage: number;
  /** Calls in the window before the share is considered. */
  volumeThreshold: number;
  rollingWindowMs: number;
  /** Time open before one trial call is let through (half-open). */
  resetTimeoutMs: number;
  /** Concurrent calls per route (bulkhead): one slow route cannot take every socket. */
  routeConcurrency: number;
  /**
   * Calls that may wait for a slot of their route, beyond which a call is
   * refused at once. A waiting call gives up when its own time-out runs out.
   */
  routeQueueLimit: number;
  /** The share of a route's slots, and of its queue, one caller may hold (1: no per-caller bound). */
  callerShare?: number;
  /**
   * Distinct keys whose calls failed within the window before a failure counts
   * against the route's shared breaker (below it, only the failing key's own breaker hears of it).
   */
  minFailingKeys?: number;
  /** ...and the share of the keys that called the route in the window those failing keys must be. */
  failingKeyShare?: number;
  /** Key-and-route pairs whose breaker and retry budget are remembered (least recently used dropped). */
  trackedKeys?: number;
}

export interface ResilienceOptions {
  retry: RetryOptions;
  breaker: BreakerOptions;
}

const DEFAULT_MIN_FAILING_KEYS = 3;
const DEFAULT_FAILING_KEY_SHARE = 0.5;
const DEFAULT_TRACKED_KEYS = 10_000;

export const DEFAULT_RESILIENCE: ResilienceOptions = Object.freeze({
  retry: Object.freeze({
    maxAttempts: 3,
    baseDelayMs: 50,
    maxDelayMs: 1_000,
    maxRetryAfterMs: 2_000,
    budgetRatio: 0.2,
    budgetCapacity: 10,
  }),
  breaker: Object.freeze({
    errorThresholdPercentage: 50,
    volumeThreshold: 20,
    rollingWindowMs: 10_000,
    resetTimeoutMs: 10_000,
    routeConcurrency: 64,
    routeQueueLimit: 1_024,
    minFailingKeys: DEFAULT_MIN_FAILING_KEYS,
    failingKeyShare: DEFAULT_FAILING_KEY_SHARE,
    trackedKeys: DEFAULT_TRACKED_KEYS,
  }),
});

export type BreakerState = 'closed' | 'open' | 'half_open';

/** A failure that says the route is unwell; 4xx, 429 and caller aborts do not. */
export function countsAgainstRoute(error: unknown): boolean {
  return error instanceof UpstreamServerError || error instanceof UpstreamTimeoutError || error instanceof UpstreamConnectionError;
}

/** Worth another attempt, when the call may be repeated. */
export function isTransient(error: unknown): boolean {
  return countsAgainstRoute(error) || error instanceof UpstreamRateLimitError;
}

/** Backoff before retry `n` with full jitter, or the upstream's `Retry-After`; null when that is too long to wait. */
export function delayBefore(retry: RetryOptions, n: number, error: unknown, random: () => number): number | null {
  const { baseDelayMs, maxDelayMs, maxRetryAfterMs } = retry;
  if (error instanceof UpstreamRateLimitError && error.retryAfterSeconds !== undefined) {
    const ms = error.retryAfterSeconds * 1000;
    return ms > maxRetryAfterMs ? null : ms;
  }
  return Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (n - 1)));
}

/** What guards one route, shared by every key that calls it. */
export interface RouteGuard {
  /**
   * Holds the route's state only (open, half-open after the reset time, closed): `health` decides when it opens.
   * Its action is `Reflect.apply`: `fire(fn, thisArg, args)` runs `fn` with no wrapper of ours between.
   */
  breaker: CircuitBreaker<[(...args: never[]) => Promise<unknown>, unknown, readonly unknown[]], unknown>;
  bulkhead: Bulkhead;
  health: RouteHealth;
  /** Every key's retries together: a retry takes a token from its key's budget and from this one. */
  budget: RetryBudget;
}

/** The route's retry burst, in keys' worth: ten keys may retry at once, and no single key spends more than its own. */
const ROUTE_BUDGET_KEYS = 10;

/** The guards of every route called so far, and of every key on each (key-health.ts). */
export class RouteGuards {
  private readonly routes = new Map<string, RouteGuard>();
  readonly keys: KeyGuards;

  constructor(readonly options: ResilienceOptions) {
    const { breaker, retry } = options;
    this.keys = new KeyGuards(breaker.trackedKeys ?? DEFAULT_TRACKED_KEYS, breaker, { ratio: retry.budgetRatio, capacity: retry.budgetCapacity });
  }

  of(route: string): RouteGuard {
    let guard = this.routes.get(route);
    if (!guard) {
      const b = this.options.breaker;
      const breaker = new CircuitBreaker(Reflect.apply as (fn: (...args: never[]) => Promise<unknown>, thisArg: unknown, args: readonly unknown[]) => Promise<unknown>, {
        name: route,
        timeout: false, // each attempt carries its own time-out (the transport's)
        rollingCountTimeout: b.rollingWindowMs,
        resetTimeout: b.resetTimeoutMs,
        // No failure opens it by opossum's own count: `health` decides, over keys, and calls `open()`.
        errorFilter: () => true,
      });
      guard = {
        breaker,
        bulkhead: new Bulkhead(b.routeConcurrency, b.routeQueueLimit, b.callerShare ?? 1),
        health: new RouteHealth({
          ...b,
          minKeys: b.minFailingKeys ?? DEFAULT_MIN_FAILING_KEYS,
          keyShare: b.failingKeyShare ?? DEFAULT_FAILING_KEY_SHARE,
          cap: b.trackedKeys ?? DEFAULT_TRACKED_KEYS,
        }),
        budget: new RetryBudget(this.options.retry.budgetRatio, this.options.retry.budgetCapacity * ROUTE_BUDGET_KEYS),
      };
      this.routes.set(route, guard);
    }
    return guard;
  }

  breakerStates(): Record<string, BreakerState> {
    const states: Record<string, BreakerState> = {};
    for (const [route, { breaker }] of this.routes) {
      states[route] = breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed';
    }
    return states;
  }

  /** Breaker state and bulkhead occupancy per route called so far. */
  routeStats(): Record<string, RouteStats> {
    const stats: Record<string, RouteStats> = {};
    const states = this.breakerStates();
    for (const [route, { bulkhead }] of this.routes) {
      stats[route] = { state: states[route] ?? 'closed', inFlight: bulkhead.inFlight, queued: bulkhead.queued };
    }
    return stats;
  }

  close(): void {
    for (const { breaker } of this.routes.values()) breaker.shutdown();
    this.routes.clear();
    this.keys.clear();
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}
