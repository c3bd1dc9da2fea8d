/**
 * The resilience rules' settings and state, which call.ts applies in order. One key's failures stay
 * its own (key-health.ts); only a call safe to repeat (a read, or a write with an idempotency key) is
 * retried, so a write is never charged twice.
 */
import CircuitBreaker from 'opossum';
import {
  UpstreamConnectionError,
  UpstreamRateLimitError,
  UpstreamResponseTooLargeError,
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
  budgetCapacity: number;
}

export interface BreakerOptions {
  /** Failure share over the rolling window that opens the breaker. */
  errorThresholdPercentage: number;
  /** Calls in the window before the share is considered. */
  volumeThreshold: number;
  rollingWindowMs: number;
  resetTimeoutMs: number;
  /** Concurrent calls per route (bulkhead): one slow route cannot take every socket. */
  routeConcurrency: number;
  /** Beyond this many waiting for a slot, a call is refused at once; a waiter gives up at its own time-out. */
  routeQueueLimit: number;
  /** The share of a route's slots, and of its queue, one caller may hold (1: no per-caller bound). */
  callerShare?: number;
  /** Distinct failing keys in the window before a failure counts against the route's shared breaker. */
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

/** The key's own breaker also counts answers too large: one tenant's huge pages open its breaker, never the route's. */
export function countsAgainstKey(error: unknown): boolean {
  return countsAgainstRoute(error) || error instanceof UpstreamResponseTooLargeError;
}

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

export interface RouteGuard {
  /** State only: `health` decides when it opens. Its action is `Reflect.apply`: no wrapper of ours between. */
  breaker: CircuitBreaker<[(...args: never[]) => Promise<unknown>, unknown, readonly unknown[]], unknown>;
  bulkhead: Bulkhead;
  health: RouteHealth;
  /** Every key's retries together: a retry takes a token from its key's budget and from this one. */
  budget: RetryBudget;
}

/** The route's retry burst, in keys' worth: ten keys may retry at once, and no single key spends more than its own. */
const ROUTE_BUDGET_KEYS = 10;

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
