/**
 * What stands between a resource verb and the wire: per-route circuit
 * breakers (opossum), a concurrency cap with a bounded wait queue, retries with exponential backoff
 * and full jitter, `Retry-After`, a retry budget, and the operation's deadline.
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
  UpstreamUnavailableError,
} from './errors.js';
import { Bulkhead } from './bulkhead.js';
import { KeyGuards, RouteHealth, type KeyBreaker } from './key-health.js';
import type { RouteStats, UpstreamObserver } from './observer.js';
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
  /** Opens the breaker (opossum only keeps its state: open, half-open after the reset time, closed). */
  health: RouteHealth;
  /** Every key's retries together: a retry takes a token from its key's budget and from this one. */
  budget: RetryBudget;
}

export interface ResilienceDeps {
  random?: () => number;
  now?: () => number;
}

/** The route's retry burst, in keys' worth: ten keys may retry at once, and no single key spends more than its own. */
const ROUTE_BUDGET_KEYS = 10;

export class Resilience {
  private readonly routes = new Map<string, RouteGuard>();
  private readonly keys: KeyGuards;
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
    const { breaker, retry } = options;
    this.keys = new KeyGuards(breaker.trackedKeys ?? DEFAULT_TRACKED_KEYS, breaker, { ratio: retry.budgetRatio, capacity: retry.budgetCapacity });
  }

  async run<T>(scope: CallScope, attempt: Attempt<T>): Promise<T> {
    const guard = this.guard(scope.route);
    const key = scope.caller ?? '';
    const mine = this.keys.of(scope.route, key);
    const { retry } = this.options;
    mine.budget.deposit();
    guard.budget.deposit();
    for (let n = 1; ; n++) {
      const timeoutMs = this.attemptTimeout(scope);
      let error: unknown;
      try {
        return await this.once(guard, mine, key, scope, (ms) => attempt(ms, n), timeoutMs);
      } catch (e) {
        error = this.translate(e, scope.route);
      }
      if (scope.signal?.aborted) throw error;
      if (!scope.repeatable || n >= retry.maxAttempts || !isTransient(error)) throw error;
      const delay = this.delayBefore(n, error);
      if (delay === null) throw error;
      if (scope.deadlineAt !== undefined && this.now() + delay >= scope.deadlineAt) throw error;
      // Both, or neither: a key's own budget keeps it from spending others' retries; the route's keeps
      // many keys from multiplying the retries a rate-limited or failing upstream receives.
      if (mine.budget.available < 1 - 1e-9 || !guard.budget.tryWithdraw() || !mine.budget.tryWithdraw()) {
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
    this.keys.clear();
  }

  /**
   * One attempt through the key's breaker, the route's breaker (both answer
   * first: an open one fails fast, without queueing), then the route's
   * bulkhead within the attempt's time-out. A 4xx is a healthy answer to
   * both breakers; a 5xx, time-out or connection failure counts against the
   * key, and against the route only when several keys see them.
   */
  private async once<T>(guard: RouteGuard, mine: KeyBreaker, key: string, scope: CallScope, attempt: (timeoutMs: number) => Promise<T>, timeoutMs: number): Promise<T> {
    if (!mine.allow(this.now())) throw new UpstreamUnavailableError({ route: scope.route, reason: 'circuit_open' });
    let failed: boolean | undefined;
    try {
      return (await guard.breaker.fire(async () => {
        try {
          const result = await this.throughBulkhead(guard.bulkhead, scope, timeoutMs, attempt);
          failed = false;
          guard.health.record(key, false, this.now());
          return result;
        } catch (error) {
          failed = this.failedCall(error, scope);
          // A half-open trial that fails reopens the route: it was opened by many keys' failures.
          const reopen = failed === true && guard.breaker.halfOpen;
          if (failed !== undefined && (guard.health.record(key, failed, this.now()) || reopen)) guard.breaker.open();
          throw error;
        }
      })) as T;
    } finally {
      if (failed === undefined) mine.abandonTrial();
      else mine.record(failed, this.now());
    }
  }

  /** True: the upstream was unwell for this call; false: it answered (a 4xx included); undefined: no verdict (aborted, never sent). */
  private failedCall(error: unknown, scope: CallScope): boolean | undefined {
    if (countsAgainstRoute(error)) return true;
    if (scope.signal?.aborted || error instanceof UpstreamUnavailableError) return undefined;
    return false;
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
