/**
 * Per-key breakers and retry budgets, so one failing API key pays for its own failures. Keys are
 * known by a hash, never the key itself, and how many are remembered is bounded.
 */
import { LRUCache } from 'lru-cache';
import { RetryBudget } from './retry-budget.js';

export interface KeyBreakerOptions {
  errorThresholdPercentage: number;
  volumeThreshold: number;
  rollingWindowMs: number;
  resetTimeoutMs: number;
}

export class KeyBreaker {
  private windowStart = 0;
  private calls = 0;
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;

  constructor(
    private readonly options: KeyBreakerOptions,
    readonly budget: RetryBudget,
  ) {}

  /** Whether a call may go out now; when half-open, only the first caller gets the trial. */
  allow(now: number): boolean {
    if (this.openUntil === 0) return true;
    if (now < this.openUntil || this.trialInFlight) return false;
    this.trialInFlight = true;
    return true;
  }

  /** The outcome of an allowed call: `failed` only for what says the upstream is unwell for this key. */
  record(failed: boolean, now: number): void {
    if (this.trialInFlight) {
      this.trialInFlight = false;
      if (failed) this.openUntil = now + this.options.resetTimeoutMs;
      else this.close(now);
      return;
    }
    if (this.openUntil !== 0) return; // a call let through before the breaker opened
    if (now - this.windowStart >= this.options.rollingWindowMs) this.close(now);
    this.calls++;
    if (failed) this.failures++;
    const { volumeThreshold, errorThresholdPercentage } = this.options;
    if (this.calls >= volumeThreshold && (this.failures * 100) / this.calls >= errorThresholdPercentage) {
      this.openUntil = now + this.options.resetTimeoutMs;
    }
  }

  /** A trial that ended without an outcome (aborted by its caller) gives the turn to the next call. */
  abandonTrial(): void {
    this.trialInFlight = false;
  }

  get open(): boolean {
    return this.openUntil !== 0;
  }

  private close(now: number): void {
    this.openUntil = 0;
    this.windowStart = now;
    this.calls = 0;
    this.failures = 0;
  }
}

/** Re-inserted on every touch, so the Map's order drops stale and oldest keys from the front. */
export class RecentKeys {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly cap: number,
  ) {}

  touch(key: string, now: number): void {
    this.seen.delete(key);
    this.seen.set(key, now);
    if (this.seen.size > this.cap) this.seen.delete(this.seen.keys().next().value as string);
  }

  size(now: number): number {
    for (const [key, at] of this.seen) {
      if (now - at < this.windowMs) break;
      this.seen.delete(key);
    }
    return this.seen.size;
  }
}

export interface RouteHealthOptions extends KeyBreakerOptions {
  /** Distinct keys whose calls failed within the window before the route may open. */
  minKeys: number;
  /** ...and the share of the keys that called the route in the window they must make up. */
  keyShare: number;
  cap: number;
}

/** The route's tally: one key's failures, however many, are not the route's. */
export class RouteHealth {
  private readonly active: RecentKeys;
  private readonly failing: RecentKeys;
  private windowStart = 0;
  private calls = 0;
  private failures = 0;

  constructor(private readonly options: RouteHealthOptions) {
    this.active = new RecentKeys(options.rollingWindowMs, options.cap);
    this.failing = new RecentKeys(options.rollingWindowMs, options.cap);
  }

  /** True when the route should open. */
  record(key: string, failed: boolean, now: number): boolean {
    if (now - this.windowStart >= this.options.rollingWindowMs) {
      this.windowStart = now;
      this.calls = 0;
      this.failures = 0;
    }
    this.calls++;
    this.active.touch(key, now);
    if (!failed) return false;
    this.failures++;
    this.failing.touch(key, now);
    const { volumeThreshold, errorThresholdPercentage, minKeys, keyShare } = this.options;
    if (this.calls < volumeThreshold || (this.failures * 100) / this.calls < errorThresholdPercentage) return false;
    const failing = this.failing.size(now);
    return failing >= minKeys && failing >= keyShare * this.active.size(now);
  }
}

/** Every key's breaker and retry budget, per route, for the most recently seen `max` pairs. */
export class KeyGuards {
  private readonly byKey: LRUCache<string, KeyBreaker>;

  constructor(
    max: number,
    private readonly breaker: KeyBreakerOptions,
    private readonly budget: { ratio: number; capacity: number },
  ) {
    this.byKey = new LRUCache({ max });
  }

  of(route: string, key: string): KeyBreaker {
    const id = `${route}\u0000${key}`;
    let guard = this.byKey.get(id);
    if (!guard) {
      guard = new KeyBreaker(this.breaker, new RetryBudget(this.budget.ratio, this.budget.capacity));
      this.byKey.set(id, guard);
    }
    return guard;
  }

  clear(): void {
    this.byKey.clear();
  }
}
