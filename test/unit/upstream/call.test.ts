/**
 * One upstream call's order of decisions (call.ts) over a fake transport, a
 * clock the test moves and a random source it sets: which failures count
 * against the breakers, the route's half-open trial, a full bulkhead, what time-out a queued attempt is sent with, the
 * deadline's edges, and a backoff cut short by the caller's abort.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamRateLimitError, UpstreamTimeoutError, UpstreamUnavailableError } from '../../../src/upstream/errors.js';
import { DEFAULT_RESILIENCE } from '../../../src/upstream/resilience.js';
import type { TransportResponse } from '../../../src/upstream/transport.js';
import { OK, ROUTE, setup, status } from './fake-calls.js';

describe('what counts against the breakers', () => {
  const BREAKER_AT_3 = { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 }, breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: 3, minFailingKeys: 1, failingKeyShare: 0 } };

  it("does not count the upstream's 429s against the key's breaker or the route's", async () => {
    const { retrieve, sent, guards } = setup(() => status(429), { resilience: BREAKER_AT_3 });
    for (const key of ['sk_a', 'sk_b', 'sk_c']) {
      for (let i = 0; i < 5; i++) await expect(retrieve(key)).rejects.toBeInstanceOf(UpstreamRateLimitError);
    }
    // Every call was sent: no breaker opened on a rate limit.
    expect(sent).toHaveLength(15);
    expect(guards.breakerStates()).toEqual({ [ROUTE]: 'closed' });
  });

  it('counts 5xx against them: the same calls answered 503 open the breakers', async () => {
    const { retrieve, sent, guards } = setup(() => status(503), { resilience: BREAKER_AT_3 });
    for (const key of ['sk_a', 'sk_b', 'sk_c']) {
      for (let i = 0; i < 5; i++) await retrieve(key).catch(() => undefined);
    }
    expect(sent.length).toBeLessThan(15);
    expect(guards.breakerStates()).toEqual({ [ROUTE]: 'open' });
    await expect(retrieve('sk_fresh')).rejects.toMatchObject({ reason: 'circuit_open' });
  });

  it('does not count a 4xx against them', async () => {
    const { retrieve, sent } = setup(() => status(404), { resilience: BREAKER_AT_3 });
    for (let i = 0; i < 6; i++) await retrieve().catch(() => undefined);
    expect(sent).toHaveLength(6);
  });

  it("counts a 4xx as a healthy call in the key's window: two 404s and two 500s are half of four", async () => {
    const answers = [status(404), status(404), status(500), status(500), OK];
    const { retrieve, sent } = setup((n) => answers[n - 1]!, { resilience: { retry: BREAKER_AT_3.retry, breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: 4 } } });
    for (let i = 0; i < 4; i++) await retrieve('sk_a').catch(() => undefined);
    await expect(retrieve('sk_a')).rejects.toMatchObject({ reason: 'circuit_open' });
    expect(sent).toHaveLength(4);
  });

  it("leaves calls their callers aborted out of the route's tally: they are neither healthy nor failed", async () => {
    let controller = new AbortController();
    const gone = new Error('client gone');
    // Nine calls aborted while sent, then six 500s from three keys: six of six failed, not six of fifteen.
    const s = setup((n) => (n <= 9 ? () => (controller.abort(gone), Promise.reject(gone)) : status(500)), {
      resilience: { retry: BREAKER_AT_3.retry, breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: 6, minFailingKeys: 3 } },
    });
    const keys = ['sk_a', 'sk_b', 'sk_c'];
    for (let i = 0; i < 9; i++) {
      controller = new AbortController();
      await expect(s.retrieve(keys[i % 3], { signal: controller.signal })).rejects.toBe(gone);
    }
    for (let i = 0; i < 6; i++) await s.retrieve(keys[i % 3]).catch(() => undefined);
    expect(s.guards.breakerStates()).toEqual({ [ROUTE]: 'open' });
    await expect(s.retrieve('sk_fresh')).rejects.toMatchObject({ reason: 'circuit_open' });
    expect(s.sent).toHaveLength(15);
  });
});

describe("the route's half-open trial", () => {
  // Opened by three keys' 503s; half-open after 30 ms of real time (opossum's timer).
  const HALF_OPEN_AFTER_30MS = { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 }, breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: 3, minFailingKeys: 3, resetTimeoutMs: 30 } };

  async function halfOpen(trial: TransportResponse) {
    const s = setup((n) => (n <= 3 ? status(503) : trial), { resilience: HALF_OPEN_AFTER_30MS });
    for (const key of ['sk_a', 'sk_b', 'sk_c']) await s.retrieve(key).catch(() => undefined);
    expect(s.guards.breakerStates()).toEqual({ [ROUTE]: 'open' });
    await new Promise((r) => setTimeout(r, 60));
    expect(s.guards.breakerStates()).toEqual({ [ROUTE]: 'half_open' });
    // A new window: the route's tally alone would not open it again.
    s.clock.now += DEFAULT_RESILIENCE.breaker.rollingWindowMs;
    return s;
  }

  it('reopens the route when the trial fails, though one failure in a new window is not enough to open it', async () => {
    const s = await halfOpen(status(503));
    await s.retrieve('sk_trial').catch(() => undefined);
    expect(s.guards.breakerStates()).toEqual({ [ROUTE]: 'open' });
    expect(s.sent).toHaveLength(4);
  });

  it('closes the route when the trial is answered, even with a 4xx', async () => {
    const s = await halfOpen(status(404));
    await s.retrieve('sk_trial').catch(() => undefined);
    expect(s.guards.breakerStates()).toEqual({ [ROUTE]: 'closed' });
  });
});

describe("the route's bulkhead", () => {
  it('refuses a call at once as route_saturated when every slot and the queue are taken', async () => {
    let free = () => {};
    const held = new Promise<TransportResponse>((resolve) => (free = () => resolve(OK)));
    const s = setup((n) => (n === 1 ? () => held : OK), { resilience: { breaker: { ...DEFAULT_RESILIENCE.breaker, routeConcurrency: 1, routeQueueLimit: 0 } } });
    const first = s.retrieve('sk_a');
    await new Promise((r) => setTimeout(r, 5));
    const refused = await s.retrieve('sk_b').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamUnavailableError);
    expect(refused).toMatchObject({ route: ROUTE, reason: 'route_saturated' });
    free();
    await expect(first).resolves.toMatchObject({ id: 101 });
    expect(s.sent).toHaveLength(1);
  });
});

describe("a queued attempt's time-out", () => {
  /** One slot: the first call holds it until `free()`, the second waits in the queue. */
  function oneSlot() {
    let free = () => {};
    const held = new Promise<TransportResponse>((resolve) => (free = () => resolve(OK)));
    const s = setup((n) => (n === 1 ? () => held : OK), { resilience: { breaker: { ...DEFAULT_RESILIENCE.breaker, routeConcurrency: 1 } }, callTimeoutMs: 1_000 });
    return { ...s, free: () => free() };
  }

  it('is what its wait in the queue left of it', async () => {
    const { retrieve, sent, clock, free, guards } = oneSlot();
    const first = retrieve('sk_a');
    await Promise.resolve();
    const second = retrieve('sk_b');
    await new Promise((r) => setTimeout(r, 5));
    expect(guards.routeStats()[ROUTE]).toMatchObject({ inFlight: 1, queued: 1 });
    clock.now += 300;
    free();
    await Promise.all([first, second]);
    expect(sent.map((r) => r.timeoutMs)).toEqual([1_000, 700]);
  });

  it('is 1 ms at least when the wait took all of it', async () => {
    const { retrieve, sent, clock, free } = oneSlot();
    const first = retrieve('sk_a');
    await Promise.resolve();
    const second = retrieve('sk_b');
    await new Promise((r) => setTimeout(r, 5));
    clock.now += 5_000;
    free();
    await Promise.all([first, second]);
    expect(sent.map((r) => r.timeoutMs)).toEqual([1_000, 1]);
  });
});

describe('the deadline', () => {
  // random 0.5 and a base of 20 ms: the first backoff is 10 ms.
  const RETRY = { retry: { ...DEFAULT_RESILIENCE.retry, baseDelayMs: 20, maxDelayMs: 1_000 } };

  it('retries only when the backoff ends before the deadline', async () => {
    const at = setup((n) => (n === 1 ? status(503) : OK), { resilience: RETRY, random: 0.5 });
    await expect(at.retrieve('sk_a', { deadlineAt: at.clock.now + 10 })).rejects.toBeInstanceOf(Error);
    expect(at.sent).toHaveLength(1);

    const before = setup((n) => (n === 1 ? status(503) : OK), { resilience: RETRY, random: 0.5 });
    await expect(before.retrieve('sk_a', { deadlineAt: before.clock.now + 11 })).resolves.toMatchObject({ id: 101 });
    expect(before.sent).toHaveLength(2);
  });

  it('shrinks the attempt to what is left, and sends nothing when nothing is', async () => {
    const s = setup(() => OK, { callTimeoutMs: 1_000 });
    await s.retrieve('sk_a', { deadlineAt: s.clock.now + 1 });
    await s.retrieve('sk_a', { deadlineAt: s.clock.now + 5_000 });
    expect(s.sent.map((r) => r.timeoutMs)).toEqual([1, 1_000]);
    const error = await s.retrieve('sk_a', { deadlineAt: s.clock.now }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error).toMatchObject({ route: ROUTE });
    expect(s.sent).toHaveLength(2);
  });
});

describe('the backoff between attempts', () => {
  it("ends at once when the caller aborts, without another attempt", async () => {
    // random 1 against a base of 60 s: a backoff of about a minute.
    const s = setup(() => status(503), { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, baseDelayMs: 60_000, maxDelayMs: 60_000 } }, random: 0.999 });
    const controller = new AbortController();
    const reason = new Error('client gone');
    const started = Date.now();
    const call = s.retrieve('sk_a', { signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(reason), 20);
    const outcome = await Promise.race([call, new Promise((r) => setTimeout(() => r('still waiting'), 2_000))]);
    expect(outcome).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(s.sent).toHaveLength(1);
  });

  it('is the full-jitter backoff of the attempt, and Retry-After when the upstream names one', async () => {
    const s = setup((n) => (n === 1 ? status(503) : n === 2 ? status(429, { 'retry-after': '0' }) : OK), {
      resilience: { retry: { ...DEFAULT_RESILIENCE.retry, baseDelayMs: 40, maxDelayMs: 1_000 } },
      random: 0.5,
    });
    const started = Date.now();
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
    expect(s.sent).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(19);
  });

  it('is refused when a Retry-After is longer than allowed', async () => {
    const s = setup(() => status(429, { 'retry-after': '3' }), { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, maxRetryAfterMs: 2_000 } } });
    await expect(s.retrieve()).rejects.toBeInstanceOf(UpstreamRateLimitError);
    expect(s.sent).toHaveLength(1);
  });
});

describe('an open key breaker', () => {
  it('fails the call at once, without queueing or sending', async () => {
    const s = setup(() => status(500), { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 }, breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: 2 } } });
    await s.retrieve('sk_bad').catch(() => undefined);
    await s.retrieve('sk_bad').catch(() => undefined);
    const error = await s.retrieve('sk_bad').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ reason: 'circuit_open', route: ROUTE });
    expect(s.sent).toHaveLength(2);
  });
});
