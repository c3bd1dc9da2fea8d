/**
 * The client's retries, retry budget, deadline and breaker, against the fake
 * upstream: what is sent again, how often, and when the client stops.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  HTTP_CLIENTS,
  Bulkhead,
  DEFAULT_RESILIENCE,
  RetryBudget,
  UpstreamRateLimitError,
  UpstreamServerError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  createUpstreamClient,
  type ResilienceOptions,
  type UpstreamClient,
  NO_OPERATION,
} from '../../src/upstream/index.js';
import { startFakeUpstream, type FakeUpstream, type Reply } from './fake-upstream.js';
import { aPayout, aTransaction, enveloped } from './fixtures.js';
import { TEST_KEY } from './harness.js';
import { Decimal } from '../../src/upstream/decimal.js';

/** Amounts travel as Decimals (src/upstream/decimal.ts). */
const dec = (text: string): Decimal => Decimal.parse(text) as Decimal;

const FAST: ResilienceOptions = {
  retry: { ...DEFAULT_RESILIENCE.retry, baseDelayMs: 5, maxDelayMs: 20 },
  breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: Number.MAX_SAFE_INTEGER },
};

describe.each(HTTP_CLIENTS)('%s transport', (httpClient) => {
  let upstream: FakeUpstream;
  const clients: UpstreamClient[] = [];
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    upstream.requests.splice(0);
  });
  afterAll(() => upstream.close());

  function client(resilience: ResilienceOptions = FAST, timeoutMs = 2_000): UpstreamClient {
    const c = createUpstreamClient({ baseUrl: upstream.url, httpClient, timeoutMs, resilience });
    clients.push(c);
    return c;
  }

  /** The first `failures` requests get `failure`, the rest a transaction. */
  function failFirst(failures: number, failure: Reply): void {
    let n = 0;
    upstream.replyWith(() => (n++ < failures ? failure : { json: enveloped('transaction', aTransaction()) }));
  }

  describe('retries', () => {
    it('retries a read on 503 and answers with the later success', async () => {
      failFirst(2, { status: 503, json: { message: 'busy' } });

      await expect(client().forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101)).resolves.toMatchObject({ id: 101 });
      expect(upstream.requests).toHaveLength(3);
    });

    it('sends a keyed write again with the same Idempotency-Key', async () => {
      let n = 0;
      upstream.replyWith(() => (n++ === 0 ? 'reset' : { json: enveloped('payout', aPayout()) }));

      await client().forKey(TEST_KEY, NO_OPERATION).payouts.create({ amount: dec('500'), currencyIso: 'XOF' }, { idempotencyKey: 'k-1' });

      expect(upstream.requests.map((r) => r.headers['idempotency-key'])).toEqual(['k-1', 'k-1']);
    });

    it.each([
      ['a write without a key', (c: UpstreamClient) => c.forKey(TEST_KEY, NO_OPERATION).payouts.create({ amount: dec('500'), currencyIso: 'XOF' })],
      ['an update without a key', (c: UpstreamClient) => c.forKey(TEST_KEY, NO_OPERATION).transactions.update(5, { description: 'x' })],
    ])('never retries %s', async (_label, call) => {
      failFirst(1, { status: 503, json: { message: 'busy' } });

      await expect(call(client())).rejects.toBeInstanceOf(UpstreamServerError);
      expect(upstream.requests).toHaveLength(1);
    });

    it('gives up after maxAttempts', async () => {
      failFirst(10, { status: 500, json: {} });

      await expect(client().forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101)).rejects.toBeInstanceOf(UpstreamServerError);
      expect(upstream.requests).toHaveLength(DEFAULT_RESILIENCE.retry.maxAttempts);
    });

    it('honours Retry-After within the allowed wait', async () => {
      failFirst(1, { status: 429, json: {}, headers: { 'retry-after': '1' } });
      const started = Date.now();

      await client().forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101);

      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(upstream.requests).toHaveLength(2);
    });

    it('does not wait for a Retry-After longer than maxRetryAfterMs', async () => {
      failFirst(1, { status: 429, json: {}, headers: { 'retry-after': '30' } });

      const error = await client().forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamRateLimitError);
      expect(upstream.requests).toHaveLength(1);
    });

    it('shrinks the last attempt to the deadline and stops there', async () => {
      upstream.replyWith('hang');
      const started = Date.now();

      const error = await client(FAST, 5_000).forKey(TEST_KEY, { deadlineAt: Date.now() + 400 }).transactions.retrieve(101).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(Date.now() - started).toBeLessThan(400 + 300);
    });
  });

  describe('retry budget', () => {
    it('allows its capacity at once, then one retry per 1/ratio first attempts', () => {
      const budget = new RetryBudget(0.1, 3);
      const burst = [0, 1, 2, 3].map(() => budget.tryWithdraw());
      expect(burst).toEqual([true, true, true, false]);
      for (let i = 0; i < 9; i++) budget.deposit();
      expect(budget.tryWithdraw()).toBe(false);
      budget.deposit();
      expect(budget.tryWithdraw()).toBe(true);
    });

    it('bounds the extra traffic a failing route sees', async () => {
      upstream.replyWith({ status: 500, json: {} });
      const ratio = 0.1;
      const capacity = 2;
      const c = client({ ...FAST, retry: { ...FAST.retry, budgetRatio: ratio, budgetCapacity: capacity } });
      const calls = 50;

      for (let i = 0; i < calls; i++) await c.forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101).catch(() => undefined);

      expect(upstream.requests.length).toBeLessThanOrEqual(calls + capacity + calls * ratio);
      expect(upstream.requests.length).toBeGreaterThan(calls);
    });

    it("is a key's own: one key's retries do not spend another key's", async () => {
      upstream.replyWith((req) => (req.headers.authorization === 'Bearer k-bad' ? { status: 500, json: {} } : { status: 503, json: {} }));
      const c = client({ ...FAST, retry: { ...FAST.retry, budgetRatio: 0, budgetCapacity: 2 } });

      for (let i = 0; i < 10; i++) await c.forKey('k-bad', NO_OPERATION).transactions.retrieve(101).catch(() => undefined);
      const badSent = upstream.requests.length;
      await c.forKey('k-good', NO_OPERATION).transactions.retrieve(101).catch(() => undefined);

      expect(badSent).toBe(10 + 2); // its two tokens, then first attempts only
      expect(upstream.requests.length - badSent).toBe(DEFAULT_RESILIENCE.retry.maxAttempts);
    });

    it('is bounded for the route too: many keys together retry no more than ten keys would', async () => {
      upstream.replyWith({ status: 503, json: {} });
      const c = client({ ...FAST, retry: { ...FAST.retry, budgetRatio: 0, budgetCapacity: 2 } });
      const keys = Array.from({ length: 30 }, (_, i) => `k-${i}`);

      for (const key of keys) await c.forKey(key, NO_OPERATION).transactions.retrieve(101).catch(() => undefined);

      // Each key alone could retry twice (90 requests); the route allows 2 x 10 retries in all.
      expect(upstream.requests.length).toBe(30 + 20);
    });
  });

  describe('circuit breaker', () => {
    const ROUTE = 'GET /v1/transactions/:id';
    const breakerAt3 = (over: Partial<ResilienceOptions['breaker']> = {}): ResilienceOptions => ({
      retry: { ...FAST.retry, maxAttempts: 1 },
      breaker: { ...FAST.breaker, volumeThreshold: 3, resetTimeoutMs: 60_000, minFailingKeys: 3, ...over },
    });
    /** 500 for the keys in `failing`, a transaction for every other key. */
    const failFor = (...failing: string[]) =>
      upstream.replyWith((req) => (failing.some((k) => req.headers.authorization === `Bearer ${k}`) ? { status: 500, json: {} } : { json: enveloped('transaction', aTransaction()) }));
    const sentBy = (key: string) => upstream.requests.filter((r) => r.headers.authorization === `Bearer ${key}`).length;

    it('opens after the volume threshold and then fails fast without a request', async () => {
      upstream.replyWith({ status: 500, json: {} });
      const c = client(breakerAt3());
      for (const key of ['k-1', 'k-2', 'k-3']) {
        for (let i = 0; i < 3; i++) await c.forKey(key, NO_OPERATION).transactions.retrieve(101).catch(() => undefined);
      }
      const sent = upstream.requests.length;

      // Down for every key: the route's breaker is open, and a key that never failed is not sent either.
      const error = await c.forKey('k-fresh', NO_OPERATION).transactions.retrieve(101).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect(error).toMatchObject({ reason: 'circuit_open', route: ROUTE });
      expect(upstream.requests).toHaveLength(sent);
      expect(sentBy('k-fresh')).toBe(0);
      expect(c.breakerStates()).toEqual({ [ROUTE]: 'open' });
    });

    it("opens only the failing key's breaker when its calls alone fail; other keys are still sent", async () => {
      failFor('k-bad');
      const c = client(breakerAt3());
      for (let i = 0; i < 20; i++) await c.forKey('k-bad', NO_OPERATION).transactions.retrieve(101).catch(() => undefined);

      const bad = await c.forKey('k-bad', NO_OPERATION).transactions.retrieve(101).catch((e: unknown) => e);
      const good = await Promise.all(Array.from({ length: 10 }, () => c.forKey('k-good', NO_OPERATION).transactions.retrieve(101)));

      expect(bad).toMatchObject({ reason: 'circuit_open', route: ROUTE });
      expect(sentBy('k-bad')).toBe(3); // its own breaker opened at the volume threshold
      expect(good.every((t) => t.id === 101)).toBe(true);
      expect(sentBy('k-good')).toBe(10);
      expect(c.breakerStates()).toEqual({ [ROUTE]: 'closed' });
    });

    it('counts failures against the route only while they are a share of the keys calling it', async () => {
      failFor('k-1', 'k-2', 'k-3');
      const c = client(breakerAt3({ failingKeyShare: 0.5 }));
      // Seven keys are served well; three failing keys are under half of the ten.
      for (const key of ['g-1', 'g-2', 'g-3', 'g-4', 'g-5', 'g-6', 'g-7']) await c.forKey(key, NO_OPERATION).transactions.retrieve(101);
      for (const key of ['k-1', 'k-2', 'k-3']) {
        for (let i = 0; i < 5; i++) await c.forKey(key, NO_OPERATION).transactions.retrieve(101).catch(() => undefined);
      }

      expect(c.breakerStates()).toEqual({ [ROUTE]: 'closed' });
      await expect(c.forKey('g-1', NO_OPERATION).transactions.retrieve(101)).resolves.toMatchObject({ id: 101 });
    });

    it('does not count 4xx answers as route failures', async () => {
      upstream.replyWith({ status: 404, json: {} });
      const c = client({ retry: { ...FAST.retry, maxAttempts: 1 }, breaker: { ...FAST.breaker, volumeThreshold: 3 } });

      for (let i = 0; i < 10; i++) await c.forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101).catch(() => undefined);

      expect(upstream.requests).toHaveLength(10);
      expect(c.breakerStates()['GET /v1/transactions/:id']).toBe('closed');
    });
  });
});

describe('bulkhead', () => {
  it('grants slots up to the cap, then in arrival order as slots free up', async () => {
    const bulkhead = new Bulkhead(2, 10);
    const order: number[] = [];
    const a = await bulkhead.acquire(1000);
    const b = await bulkhead.acquire(1000);
    const waiters = [3, 4].map((n) => bulkhead.acquire(1000).then((release) => (order.push(n), release)));
    expect(bulkhead.queued).toBe(2);
    (a as () => void)();
    (b as () => void)();
    const released = await Promise.all(waiters);
    expect(order).toEqual([3, 4]);
    expect(bulkhead.inFlight).toBe(2);
    for (const release of released) (release as () => void)();
    expect(bulkhead.inFlight).toBe(0);
  });

  it('refuses a waiter whose time runs out, and one that finds the queue full', async () => {
    const bulkhead = new Bulkhead(1, 1);
    const held = await bulkhead.acquire(1000);
    expect(held).toBeTypeOf('function');
    const late = bulkhead.acquire(20);
    expect(await bulkhead.acquire(1000)).toBe(false); // queue of one is taken
    expect(await late).toBe(false);
    expect(bulkhead.queued).toBe(0);
    (held as () => void)();
    expect(bulkhead.inFlight).toBe(0);
  });

  it('releases a slot once, however often release is called', async () => {
    const bulkhead = new Bulkhead(1, 0);
    const release = (await bulkhead.acquire(0)) as () => void;
    release();
    release();
    expect(bulkhead.inFlight).toBe(0);
    expect(await bulkhead.acquire(0)).toBeTypeOf('function');
    expect(bulkhead.inFlight).toBe(1);
  });

  it('holds one caller to its share of the slots and of the queue; others still get in', async () => {
    // 4 slots, 8 queue places, a share of a half: one caller holds 2 slots and queues 4 at most.
    const bulkhead = new Bulkhead(4, 8, 0.5);
    const flood = await Promise.all([1, 2].map(() => bulkhead.acquire(1000, undefined, 'flood')));
    expect(flood.every((r) => typeof r === 'function')).toBe(true);
    const floodWaiting = [1, 2, 3, 4].map(() => bulkhead.acquire(1000, undefined, 'flood'));
    expect(bulkhead.inFlight).toBe(2);
    expect(await bulkhead.acquire(1000, undefined, 'flood')).toBe(false); // over its queue share
    // Another caller is not held back by the flood: free slots are there for it.
    const other = await bulkhead.acquire(0, undefined, 'other');
    expect(other).toBeTypeOf('function');
    (other as () => void)();
    for (const release of flood) (release as () => void)();
    const next = await Promise.all(floodWaiting.slice(0, 2));
    for (const release of next) (release as () => void)();
    for (const release of await Promise.all(floodWaiting.slice(2))) (release as () => void)();
    expect(bulkhead.inFlight).toBe(0);
    expect(bulkhead.queued).toBe(0);
  });

  it('hands freed slots round-robin between waiting callers', async () => {
    const bulkhead = new Bulkhead(1, 10);
    const order: string[] = [];
    const first = (await bulkhead.acquire(1000, undefined, 'a')) as () => void;
    const waiters = ['a', 'a', 'a', 'b', 'b'].map((caller) =>
      bulkhead.acquire(1000, undefined, caller).then((release) => {
        order.push(caller);
        (release as () => void)();
      }),
    );
    first();
    await Promise.all(waiters);
    expect(order).toEqual(['a', 'b', 'a', 'b', 'a']);
  });
});
