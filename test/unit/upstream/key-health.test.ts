/**
 * One key's breaker, the keys seen on a route, the route's tally over keys,
 * and the bounded map of key guards, on a clock the test moves.
 */
import { describe, expect, it } from 'vitest';
import { KeyBreaker, KeyGuards, RecentKeys, RouteHealth, type KeyBreakerOptions } from '../../../src/upstream/key-health.js';
import { RetryBudget } from '../../../src/upstream/retry-budget.js';

const OPTIONS: KeyBreakerOptions = { errorThresholdPercentage: 50, volumeThreshold: 4, rollingWindowMs: 1_000, resetTimeoutMs: 500 };
const breaker = (over: Partial<KeyBreakerOptions> = {}) => new KeyBreaker({ ...OPTIONS, ...over }, new RetryBudget(0.1, 2));

/** A breaker opened at `t` by four failures. */
function opened(t = 0): KeyBreaker {
  const b = breaker();
  for (let i = 0; i < 4; i++) {
    expect(b.allow(t)).toBe(true);
    b.record(true, t);
  }
  expect(b.open).toBe(true);
  return b;
}

describe('KeyBreaker', () => {
  it('stays closed below the volume threshold, however many of the calls failed', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.record(true, 10);
    expect(b.open).toBe(false);
    expect(b.allow(10)).toBe(true);
    b.record(true, 10);
    expect(b.open).toBe(true);
  });

  it('opens at exactly the error share, not below it', () => {
    const atShare = breaker();
    for (const failed of [true, false, true, false]) atShare.record(failed, 0);
    expect(atShare.open).toBe(true);

    const below = breaker();
    for (const failed of [true, false, false, false, true]) below.record(failed, 0);
    expect(below.open).toBe(false); // 2 of 5: 40 %
  });

  it('refuses every call while open, until the reset time', () => {
    const b = opened(0);
    expect(b.allow(0)).toBe(false);
    expect(b.allow(499)).toBe(false);
    expect(b.allow(500)).toBe(true);
  });

  it('lets one trial through when half-open, not every call', () => {
    const b = opened(0);
    expect(b.allow(600)).toBe(true);
    expect(b.allow(600)).toBe(false);
    expect(b.allow(700)).toBe(false);
  });

  it('closes after a successful trial and starts a fresh window', () => {
    const b = opened(0);
    expect(b.allow(600)).toBe(true);
    b.record(false, 600);
    expect(b.open).toBe(false);
    expect(b.allow(600)).toBe(true);
    expect(b.allow(600)).toBe(true);
    // The four failures before are forgotten: three more do not reach the volume threshold.
    for (let i = 0; i < 3; i++) b.record(true, 601);
    expect(b.open).toBe(false);
  });

  it('reopens for another reset time after a failed trial', () => {
    const b = opened(0);
    expect(b.allow(600)).toBe(true);
    b.record(true, 650);
    expect(b.open).toBe(true);
    expect(b.allow(1_149)).toBe(false);
    expect(b.allow(1_150)).toBe(true);
  });

  it('gives the trial to the next call when the trial is abandoned', () => {
    const b = opened(0);
    expect(b.allow(600)).toBe(true);
    b.abandonTrial();
    expect(b.open).toBe(true);
    expect(b.allow(600)).toBe(true);
    expect(b.allow(600)).toBe(false);
  });

  it('ignores the outcome of a call let through before it opened', () => {
    const b = opened(0);
    b.record(false, 10); // no trial in flight: a late answer does not close it
    expect(b.open).toBe(true);
    expect(b.allow(10)).toBe(false);
    b.record(true, 100); // nor does a late failure push the reset time back
    expect(b.allow(500)).toBe(true);
  });

  it('ignores a late answer that comes after its window, too', () => {
    const b = opened(0);
    b.record(false, 5_000);
    expect(b.open).toBe(true);
  });

  it('counts over a fixed window: failures from an older window are dropped', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.record(true, 0);
    b.record(true, 1_000); // a new window: one failure in it
    expect(b.open).toBe(false);
    for (let i = 0; i < 2; i++) b.record(true, 1_999);
    expect(b.open).toBe(false);
    b.record(true, 1_999);
    expect(b.open).toBe(true);
  });

  it('keeps the window until its last millisecond', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) b.record(true, 0);
    b.record(true, 999);
    expect(b.open).toBe(true);
  });

  it('carries its own retry budget', () => {
    const budget = new RetryBudget(0, 1);
    const b = new KeyBreaker(OPTIONS, budget);
    expect(b.budget).toBe(budget);
  });
});

describe('RecentKeys', () => {
  it('counts keys seen within the window, each once', () => {
    const keys = new RecentKeys(100, 10);
    keys.touch('a', 0);
    keys.touch('b', 50);
    keys.touch('a', 60);
    expect(keys.size(60)).toBe(2);
    expect(keys.size(149)).toBe(2);
    expect(keys.size(150)).toBe(1); // 'b', seen at 50, has left; 'a' was seen again at 60
    expect(keys.size(159)).toBe(1);
    expect(keys.size(160)).toBe(0);
  });

  it('drops the least recently seen key at the cap', () => {
    const keys = new RecentKeys(1_000, 2);
    keys.touch('a', 0);
    keys.touch('b', 1);
    keys.touch('a', 2);
    keys.touch('c', 3); // 'b' goes, not 'a'
    expect(keys.size(3)).toBe(2);
    expect(keys.size(1_002)).toBe(1); // 'a' at 2 expires at 1002, 'c' at 3 is left
    expect(keys.size(1_003)).toBe(0);
  });
});

describe('RouteHealth', () => {
  const health = (over: Partial<ConstructorParameters<typeof RouteHealth>[0]> = {}) =>
    new RouteHealth({ ...OPTIONS, volumeThreshold: 4, minKeys: 2, keyShare: 0.5, cap: 100, ...over });

  it('never opens for one key, however many of its calls fail', () => {
    const h = health();
    const verdicts = Array.from({ length: 10 }, () => h.record('k1', true, 0));
    expect(verdicts.every((v) => v === false)).toBe(true);
  });

  it('opens when enough keys fail, over the volume and error thresholds', () => {
    const h = health();
    expect(h.record('k1', true, 0)).toBe(false);
    expect(h.record('k2', true, 0)).toBe(false);
    expect(h.record('k1', true, 0)).toBe(false);
    expect(h.record('k2', true, 0)).toBe(true);
  });

  it('says nothing on a success', () => {
    const h = health({ volumeThreshold: 1, errorThresholdPercentage: 0, minKeys: 0, keyShare: 0 });
    expect(h.record('k1', false, 0)).toBe(false);
    expect(h.record('k1', true, 0)).toBe(true);
  });

  it('stays closed under the error share', () => {
    const h = health({ keyShare: 0 });
    for (const key of ['g1', 'g2', 'g3']) h.record(key, false, 0);
    expect(h.record('k1', true, 0)).toBe(false);
    expect(h.record('k2', true, 0)).toBe(false); // 2 of 5 failed
    expect(h.record('k2', true, 0)).toBe(true); // 3 of 6
  });

  it('wants the failing keys to be a share of the keys calling the route', () => {
    const h = health({ errorThresholdPercentage: 10 });
    for (const key of ['g1', 'g2', 'g3', 'g4', 'g5']) h.record(key, false, 0);
    h.record('k1', true, 0);
    expect(h.record('k2', true, 0)).toBe(false); // 2 failing of 7 keys
    expect(h.record('k3', true, 0)).toBe(false); // 3 of 8
    expect(h.record('k4', true, 0)).toBe(false); // 4 of 9
    expect(h.record('k5', true, 0)).toBe(true); // 5 of 10: half
  });

  it('wants at least minKeys failing keys, whatever their share', () => {
    const h = health({ minKeys: 3, keyShare: 0 });
    for (let i = 0; i < 4; i++) expect(h.record(i % 2 === 0 ? 'k1' : 'k2', true, 0)).toBe(false);
    expect(h.record('k3', true, 0)).toBe(true);
  });

  it('starts a fresh tally each window', () => {
    const h = health();
    h.record('k1', true, 0);
    h.record('k2', true, 0);
    h.record('k1', true, 0);
    // A new window: the three failures before do not count towards its volume.
    expect(h.record('k2', true, 1_000)).toBe(false);
    expect(h.record('k1', true, 1_000)).toBe(false);
    expect(h.record('k2', true, 1_999)).toBe(false);
    expect(h.record('k1', true, 1_999)).toBe(true);
  });

  it('forgets the keys of an older window when counting the failing ones', () => {
    const h = health({ volumeThreshold: 1, errorThresholdPercentage: 0, rollingWindowMs: 1_000 });
    expect(h.record('k1', true, 0)).toBe(false);
    // k1 failed 1000 ms ago: no longer one of the failing keys.
    expect(h.record('k2', true, 1_000)).toBe(false);
    expect(h.record('k3', true, 1_001)).toBe(true);
  });
});

describe('KeyGuards', () => {
  const guards = (max = 10) => new KeyGuards(max, OPTIONS, { ratio: 0.5, capacity: 2 });

  it('keeps one breaker per route and key', () => {
    const g = guards();
    const a = g.of('GET /a', 'k1');
    expect(g.of('GET /a', 'k1')).toBe(a);
    expect(g.of('GET /a', 'k2')).not.toBe(a);
    expect(g.of('GET /b', 'k1')).not.toBe(a);
  });

  it('gives each breaker a retry budget of the configured capacity and ratio', () => {
    const { budget } = guards().of('GET /a', 'k1');
    expect(budget.available).toBe(2);
    expect(budget.tryWithdraw()).toBe(true);
    budget.deposit();
    expect(budget.available).toBe(1.5);
  });

  it('gives its breakers the configured thresholds', () => {
    const b = guards().of('GET /a', 'k1');
    for (let i = 0; i < 3; i++) b.record(true, 0);
    expect(b.open).toBe(false);
    b.record(true, 0);
    expect(b.open).toBe(true);
    expect(b.allow(499)).toBe(false);
    expect(b.allow(500)).toBe(true);
  });

  it('remembers at most max pairs, and none after clear()', () => {
    const g = guards(2);
    const first = g.of('GET /a', 'k1');
    g.of('GET /a', 'k2');
    g.of('GET /a', 'k3');
    expect(g.of('GET /a', 'k1')).not.toBe(first);
    const again = g.of('GET /a', 'k1');
    g.clear();
    expect(g.of('GET /a', 'k1')).not.toBe(again);
  });
});
