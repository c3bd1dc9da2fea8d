/**
 * What stands between a resource verb and the wire: per-route circuit
 * breakers (opossum), a concurrency cap with a bounded wait queue, retries with exponential backoff
 * and full jitter, `Retry-After`, a per-route retry budget, and the
 * operation's deadline.
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
  UpstreamUnavailableError,
} from './errors.js';
import { Bulkhead } from './bulkhead.js';
import type { RouteStats, UpstreamObserver } from './observer.js';

export { Bulkhead };

export interface RetryOptions {
  /** Attempts per call, the first one included; 1 disables retries. */
  maxAttempts: number;
  /** Backoff before retry n is uniform in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the 429 is answered at once. */
  maxRetryAfterMs: number;
  /** Retry tokens earned per first attempt; a retry costs one token (per route). */
  budgetRatio: number;
  /** Tokens a route starts with and can hold at most. */
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
}

export interface ResilienceOptions {
  retry: RetryOptions;
  breaker: BreakerOptions;
}

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
  }),
});

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface CallScope {
  route: string;
  /** Who the call is for (a hash of the API key): the unit of fairness in the bulkhead. */
  caller?: string;
  /** The call may be sent again: a read, or a write with an idempotency key. */
  repeatable: boolean;
  /** Epoch ms after which no attempt starts and no backoff ends. */
  deadlineAt?: number;
  signal?: AbortSignal;
}

/**
 * One attempt, given its own time-out (the smaller of the per-call one and
 * what is left of the deadline) and its number (1 for the first).
 */
export type Attempt<T> = (timeoutMs: number, attempt: number) => Promise<T>;

/**
 * Token bucket (Finagle's RetryBudget idea): first attempts deposit
 * `ratio` tokens, a retry withdraws one, so in the long run retries add at
 * most `ratio` of the traffic to a failing route, plus `capacity` at once.
 */
export class RetryBudget {
  private tokens: number;
  constructor(
    private readonly ratio: number,
    private readonly capacity: number,
  ) {
    this.tokens = capacity;
  }
  deposit(): void {
    this.tokens = Math.min(this.capacity, this.tokens + this.ratio);
  }
  tryWithdraw(): boolean {
    // Tolerance: ten deposits of 0.1 must buy a retry despite floating point.
    if (this.tokens < 1 - 1e-9) return false;
    this.tokens -= 1;
    return true;
  }
  get available(): number {
    return this.tokens;
  }
}

/** A failure that says the route is unwell; 4xx, 429 and caller aborts do not. */
function countsAgainstRoute(error: unknown): boolean {
  return error instanceof UpstreamServerError || error instanceof UpstreamTimeoutError || error instanceof UpstreamConnectionError;
}

function isTransient(error: unknown): boolean {
  return countsAgainstRoute(error) || error instanceof UpstreamRateLimitError;
}

interface RouteGuard {
  breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;
  bulkhead: Bulkhead;
  budget: RetryBudget;
}

export interface ResilienceDeps {
  random?: () => number;
  now?: () => number;
}

export class Resilience {
  private readonly routes = new Map<string, RouteGuard>();
  private readonly random: () => number;
  private readonly now: () => number;
  /** Told about retries and budget refusals (metrics); attached by the client's `observe`. */
  observer: UpstreamObserver | undefined;

  constructor(
    readonly options: ResilienceOptions,
    private readonly callTimeoutMs: number,
    deps: ResilienceDeps = {},
  ) {
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
  }

  async run<T>(scope: CallScope, attempt: Attempt<T>): Promise<T> {
    const guard = this.guard(scope.route);
    const { retry } = this.options;
    guard.budget.deposit();
    for (let n = 1; ; n++) {
      const timeoutMs = this.attemptTimeout(scope);
      let error: unknown;
      try {
        // The breaker answers first (an open route fails fast, without queueing);
        // then the call waits for a slot of its route, within its own time-out.
        return (await guard.breaker.fire(() => this.throughBulkhead(guard.bulkhead, scope, timeoutMs, (ms) => attempt(ms, n)))) as T;
      } catch (e) {
        error = this.translate(e, scope.route);
      }
      if (scope.signal?.aborted) throw error;
      if (!scope.repeatable || n >= retry.maxAttempts || !isTransient(error)) throw error;
      const delay = this.delayBefore(n, error);
      if (delay === null) throw error;
      if (scope.deadlineAt !== undefined && this.now() + delay >= scope.deadlineAt) throw error;
      if (!guard.budget.tryWithdraw()) {
        this.observer?.retryBudgetExhausted(scope.route);
        throw error;
      }
      this.observer?.retry(scope.route);
      await sleep(delay, scope.signal);
    }
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
  }

  private async throughBulkhead<T>(bulkhead: Bulkhead, scope: CallScope, timeoutMs: number, attempt: (timeoutMs: number) => Promise<T>): Promise<T> {
    const queuedAt = this.now();
    const release = await bulkhead.acquire(timeoutMs, scope.signal, scope.caller);
    if (!release) throw new UpstreamUnavailableError({ route: scope.route, reason: 'route_saturated' });
    try {
      return await attempt(Math.max(1, timeoutMs - (this.now() - queuedAt)));
    } finally {
      release();
    }
  }

  private attemptTimeout(scope: CallScope): number {
    if (scope.deadlineAt === undefined) return this.callTimeoutMs;
    const left = scope.deadlineAt - this.now();
    if (left <= 0) throw new UpstreamTimeoutError({ route: scope.route, timeoutMs: 0 });
    return Math.min(this.callTimeoutMs, left);
  }

  /** Backoff with full jitter, or the upstream's `Retry-After`; null when that is too long to wait. */
  private delayBefore(n: number, error: unknown): number | null {
    const { baseDelayMs, maxDelayMs, maxRetryAfterMs } = this.options.retry;
    if (error instanceof UpstreamRateLimitError && error.retryAfterSeconds !== undefined) {
      const ms = error.retryAfterSeconds * 1000;
      return ms > maxRetryAfterMs ? null : ms;
    }
    return Math.floor(this.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (n - 1)));
  }

  private translate(error: unknown, route: string): unknown {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'EOPENBREAKER') return new UpstreamUnavailableError({ route, reason: 'circuit_open' });
    return error;
  }

  private guard(route: string): RouteGuard {
    let guard = this.routes.get(route);
    if (!guard) {
      const b = this.options.breaker;
      const breaker = new CircuitBreaker((action: () => Promise<unknown>) => action(), {
        name: route,
        timeout: false, // each attempt carries its own time-out (the transport's)
        errorThresholdPercentage: b.errorThresholdPercentage,
        volumeThreshold: b.volumeThreshold,
        rollingCountTimeout: b.rollingWindowMs,
        resetTimeout: b.resetTimeoutMs,
        errorFilter: (error: unknown) => !countsAgainstRoute(error),
      });
      guard = {
        breaker,
        bulkhead: new Bulkhead(b.routeConcurrency, b.routeQueueLimit, b.callerShare ?? 1),
        budget: new RetryBudget(this.options.retry.budgetRatio, this.options.retry.budgetCapacity),
      };
      this.routes.set(route, guard);
    }
    return guard;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
