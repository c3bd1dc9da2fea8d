/**
 * The resilience rules' pieces on their own (resilience.ts): the backoff
 * before each retry and its cap, `Retry-After` against the longest wait
 * allowed, which failures are transient or count against a route, the
 * abortable sleep, and the per-route guards' state and stats.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  UpstreamConnectionError,
  UpstreamNotFoundError,
  UpstreamRateLimitError,
  UpstreamServerError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../../../src/upstream/errors.js';
import { countsAgainstRoute, DEFAULT_RESILIENCE, delayBefore, isTransient, RouteGuards, sleep, type RetryOptions } from '../../../src/upstream/resilience.js';

const route = 'GET /v1/things/:id';
const RETRY: RetryOptions = { ...DEFAULT_RESILIENCE.retry, baseDelayMs: 100, maxDelayMs: 300, maxRetryAfterMs: 2_000 };
const busy = new UpstreamServerError({ route, statusCode: 503 });

describe('delayBefore', () => {
  it('draws the backoff uniformly below base * 2^(n-1)', () => {
    const half = () => 0.5;
    expect([1, 2].map((n) => delayBefore(RETRY, n, busy, half))).toEqual([50, 100]);
    expect(delayBefore(RETRY, 1, busy, () => 0)).toBe(0);
    expect(delayBefore(RETRY, 2, busy, () => 0.999)).toBe(199);
  });

  it('caps the backoff at maxDelayMs', () => {
    const almostOne = () => 0.999;
    expect([3, 4, 10].map((n) => delayBefore(RETRY, n, busy, almostOne))).toEqual([299, 299, 299]);
    expect(delayBefore(RETRY, 4, busy, () => 0.5)).toBe(150);
  });

  it("waits the upstream's Retry-After instead, up to maxRetryAfterMs included", () => {
    const never = () => {
      throw new Error('a Retry-After is not drawn');
    };
    expect(delayBefore(RETRY, 1, new UpstreamRateLimitError({ route, retryAfterSeconds: 1 }), never)).toBe(1_000);
    expect(delayBefore(RETRY, 1, new UpstreamRateLimitError({ route, retryAfterSeconds: 2 }), never)).toBe(2_000);
    expect(delayBefore(RETRY, 1, new UpstreamRateLimitError({ route, retryAfterSeconds: 0 }), never)).toBe(0);
  });

  it('does not wait for a Retry-After past maxRetryAfterMs', () => {
    expect(delayBefore(RETRY, 1, new UpstreamRateLimitError({ route, retryAfterSeconds: 2.001 }), () => 0.5)).toBeNull();
    expect(delayBefore(RETRY, 1, new UpstreamRateLimitError({ route, retryAfterSeconds: 30 }), () => 0.5)).toBeNull();
  });

  it('backs off as usual on a 429 that names no Retry-After', () => {
    expect(delayBefore(RETRY, 2, new UpstreamRateLimitError({ route }), () => 0.5)).toBe(100);
  });
});

describe('which failures count', () => {
  const cases: [string, unknown, boolean, boolean][] = [
    ['a 5xx', busy, true, true],
    ['a time-out', new UpstreamTimeoutError({ route, timeoutMs: 10 }), true, true],
    ['a connection failure', new UpstreamConnectionError({ route, systemCode: 'ECONNRESET' }), true, true],
    ['a 429', new UpstreamRateLimitError({ route }), false, true],
    ['a 404', new UpstreamNotFoundError({ route, statusCode: 404 }), false, false],
    ['a refusal by an open breaker', new UpstreamUnavailableError({ route, reason: 'circuit_open' }), false, false],
    ['anything else', new Error('abort'), false, false],
  ];
  it.each(cases)('%s: against the route %s, transient %s', (_label, error, against, transient) => {
    expect(countsAgainstRoute(error)).toBe(against);
    expect(isTransient(error)).toBe(transient);
  });
});

describe('sleep', () => {
  it('resolves at once for no time at all, even with an aborted signal, without a timer turn', async () => {
    await expect(sleep(0, AbortSignal.abort())).resolves.toBeUndefined();
    await expect(sleep(-5)).resolves.toBeUndefined();
    const order: string[] = [];
    const timer = new Promise<void>((r) => setTimeout(() => (order.push('timer'), r()), 0));
    await sleep(0).then(() => order.push('slept'));
    await timer;
    expect(order).toEqual(['slept', 'timer']);
  });

  it('waits its time, then lets go of the signal', async () => {
    const controller = new AbortController();
    const started = Date.now();
    await sleep(30, controller.signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    // The listener is gone: a retry loop's sleeps do not pile up on the operation's signal.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it("rejects with the signal's reason when aborted first", async () => {
    const controller = new AbortController();
    const reason = new Error('client gone');
    const started = Date.now();
    const slept = sleep(60_000, controller.signal);
    setTimeout(() => controller.abort(reason), 10);
    await expect(slept).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('RouteGuards', () => {
  const options = { retry: RETRY, breaker: { ...DEFAULT_RESILIENCE.breaker, routeConcurrency: 1, routeQueueLimit: 4, resetTimeoutMs: 50 } };

  it('keeps one guard per route and reports each route it has seen', async () => {
    const guards = new RouteGuards(options);
    try {
      const a = guards.of('GET /a');
      expect(guards.of('GET /a')).toBe(a);
      expect(guards.of('GET /b')).not.toBe(a);
      const held = (await a.bulkhead.acquire(1_000)) as () => void;
      const waiting = a.bulkhead.acquire(1_000);
      expect(guards.routeStats()).toEqual({
        'GET /a': { state: 'closed', inFlight: 1, queued: 1 },
        'GET /b': { state: 'closed', inFlight: 0, queued: 0 },
      });
      held();
      ((await waiting) as () => void)();
      a.breaker.open();
      expect(guards.breakerStates()).toEqual({ 'GET /a': 'open', 'GET /b': 'closed' });
      expect(guards.routeStats()['GET /a']).toEqual({ state: 'open', inFlight: 0, queued: 0 });
      await new Promise((r) => setTimeout(r, 80));
      expect(guards.breakerStates()['GET /a']).toBe('half_open');
    } finally {
      guards.close();
    }
  });

  it('gives the route a retry budget of ten keys, and its key guards the key budget', () => {
    const guards = new RouteGuards({ retry: { ...RETRY, budgetCapacity: 2, budgetRatio: 0 }, breaker: options.breaker });
    try {
      expect(guards.of('GET /a').budget.available).toBe(20);
      expect(guards.keys.of('GET /a', 'k').budget.available).toBe(2);
    } finally {
      guards.close();
    }
  });

  it('takes the optional settings when given, instead of their defaults', async () => {
    const guards = new RouteGuards({
      retry: RETRY,
      breaker: { ...options.breaker, routeConcurrency: 2, routeQueueLimit: 0, callerShare: 0.5, trackedKeys: 1, minFailingKeys: 1, failingKeyShare: 1, volumeThreshold: 1, errorThresholdPercentage: 0 },
    });
    try {
      // trackedKeys: one key-and-route pair remembered.
      const first = guards.keys.of('GET /a', 'k1');
      guards.keys.of('GET /a', 'k2');
      expect(guards.keys.of('GET /a', 'k1')).not.toBe(first);
      const a = guards.of('GET /a');
      // callerShare: one caller holds one of the two slots.
      const held = await a.bulkhead.acquire(0, undefined, 'k1');
      expect(held).toBeTypeOf('function');
      expect(await a.bulkhead.acquire(0, undefined, 'k1')).toBe(false);
      (held as () => void)();
      // failingKeyShare 1: every key calling the route must be failing, and the route remembers one key (trackedKeys).
      expect(a.health.record('g1', false, 0)).toBe(false);
      expect(a.health.record('k1', true, 0)).toBe(true);
    } finally {
      guards.close();
    }
    const remembering = new RouteGuards({ retry: RETRY, breaker: { ...options.breaker, minFailingKeys: 1, failingKeyShare: 1, volumeThreshold: 1, errorThresholdPercentage: 0 } });
    try {
      // The same share over two remembered keys: one failing key of two is not every key.
      const health = remembering.of('GET /a').health;
      expect(health.record('g1', false, 0)).toBe(false);
      expect(health.record('k1', true, 0)).toBe(false);
    } finally {
      remembering.close();
    }
  });

  it('forgets every route and key guard on close, and stops the breakers', () => {
    const guards = new RouteGuards(options);
    const a = guards.of('GET /a');
    const key = guards.keys.of('GET /a', 'k');
    guards.close();
    expect(guards.routeStats()).toEqual({});
    expect(guards.breakerStates()).toEqual({});
    expect(a.breaker.isShutdown).toBe(true);
    expect(guards.keys.of('GET /a', 'k')).not.toBe(key);
    guards.close();
  });
});
