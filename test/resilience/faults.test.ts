/**
 * Faults injected in the emulator (the real upstream's stand-in), seen through
 * the gateway over HTTP: time-outs, 5xx bursts, resets, 429s, breakers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { CREATE_PAYOUT, codes, payoutInput, post } from './support.js';

const TX_WITH_CUSTOMER = 'query ($id: ID!) { transaction(id: $id) { id amount customer { email } currency { iso } } }';

async function readyz(stack: Stack): Promise<{ status: number; body: { status: string; breakers: Record<string, string> } }> {
  const res = await fetch(new URL('/readyz', stack.gateway.url));
  return { status: res.status, body: (await res.json()) as { status: string; breakers: Record<string, string> } };
}

/** The faults are on upstream reads: no customer may come from the entity cache instead. */
const NO_ENTITY_CACHE = { ENTITY_CACHE: 'false' };

describe('time-outs, retries and Retry-After', () => {
  let stack: Stack;
  let key: string;
  let transaction: RestObject;
  beforeAll(async () => {
    stack = await startStack({ env: { ...NO_ENTITY_CACHE, UPSTREAM_TIMEOUT_MS: '300', OPERATION_DEADLINE_MS: '1000', UPSTREAM_RETRY_BASE_MS: '20' } });
    key = newKey('faults');
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    transaction = await make.transaction({ customer: { id: customer.id } });
  });
  afterAll(() => stack.stop());
  beforeEach(async () => {
    await stack.admin('DELETE', '/_emulator/faults');
    await stack.resetCounts();
  });

  const read = () => stack.gql<{ transaction: Record<string, unknown> }>(TX_WITH_CUSTOMER, { id: String(transaction.id) }, key);

  it('times out only the field on a hanging route, answers the rest, within the operation deadline', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', hang: true });
    const started = Date.now();

    const res = await read();

    const elapsed = Date.now() - started;
    expect(res.data!.transaction).toMatchObject({ id: String(transaction.id), amount: 1000, customer: null, currency: { iso: 'XOF' } });
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0]).toMatchObject({ path: ['transaction', 'customer'], extensions: { code: 'UPSTREAM_TIMEOUT' } });
    expect(elapsed).toBeLessThan(1000 + 400);
    // Retried while the deadline allowed, never past it: at most deadline / time-out attempts.
    const attempts = await stack.upstreamCalls('GET /v1/customers/:id');
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(Math.ceil(1000 / 300));
  });

  it.each([
    ['a burst of 500s', { status: 500, times: 2 }],
    ['a burst of 503s', { status: 503, times: 2 }],
    ['a reset connection', { reset: true, times: 1 }],
  ])('retries a read through %s and answers it whole', async (_label, fault) => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', ...fault });

    const res = await read();

    expect(res.errors).toBeUndefined();
    expect(res.data!.transaction).toMatchObject({ customer: { email: expect.any(String) } });
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(fault.times + 1);
  });

  it.each([
    ['a 500', { status: 500, times: 1 }, 'UPSTREAM_ERROR'],
    ['a reset connection', { reset: true, times: 1 }, 'UPSTREAM_UNAVAILABLE'],
  ])('never retries a write without an idempotency key on %s', async (_label, fault, code) => {
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/payouts', ...fault });

    const res = await post(stack.gateway.url, CREATE_PAYOUT, { input: payoutInput(700, 'no-key') }, key);

    expect(codes(res)).toEqual([code]);
    expect(await stack.upstreamCalls('POST /v1/payouts')).toBe(1);
  });

  it('retries a write that carries an idempotency key, and it acts once', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/payouts', status: 503, times: 2 });

    const res = await post<{ createPayout: { payout: { amount: number } } }>(
      stack.gateway.url,
      CREATE_PAYOUT,
      { input: payoutInput(700, 'keyed'), key: 'keyed-write' },
      key,
    );

    expect(res.errors).toBeUndefined();
    expect(res.data!.createPayout.payout.amount).toBe(700);
    expect(await stack.upstreamCalls('POST /v1/payouts')).toBe(3);
  });

  it('waits out a short Retry-After on a 429, then answers', async () => {
    // The deadline of this suite is 1 s; a 1 s Retry-After needs a longer one.
    const roomy = await startStack({ env: { OPERATION_DEADLINE_MS: '5000' } });
    try {
      const make = factories(roomy.emulator, key);
      const customer = await make.customer();
      const tx = await make.transaction({ customer: { id: customer.id } });
      await roomy.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 429, retryAfter: 1, times: 1 });
      const started = Date.now();

      const res = await roomy.gql<{ transaction: { customer: unknown } }>(TX_WITH_CUSTOMER, { id: String(tx.id) }, key);

      expect(res.errors).toBeUndefined();
      expect(res.data!.transaction.customer).not.toBeNull();
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(await roomy.upstreamCalls('GET /v1/customers/:id')).toBe(2);
    } finally {
      await roomy.stop();
    }
  });

  it.each([
    ['longer than the gateway waits', 7],
    ['past the operation deadline', 2],
  ])('answers RATE_LIMITED at once when Retry-After is %s', async (_label, seconds) => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 429, retryAfter: seconds, times: 1 });
    const started = Date.now();

    const res = await read();

    expect(res.errors![0]).toMatchObject({ path: ['transaction', 'customer'], extensions: { code: 'RATE_LIMITED', retryAfterSeconds: seconds } });
    expect(Date.now() - started).toBeLessThan(900);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(1);
  });
});

describe('circuit breaker and bulkhead', () => {
  let stack: Stack;
  let key: string;
  let transaction: RestObject;
  const others: { key: string; transaction: RestObject }[] = [];
  beforeAll(async () => {
    stack = await startStack({
      env: {
        ...NO_ENTITY_CACHE,
        UPSTREAM_MAX_ATTEMPTS: '1',
        BREAKER_VOLUME_THRESHOLD: '4',
        BREAKER_RESET_MS: '400',
        UPSTREAM_ROUTE_CONCURRENCY: '3',
        // No waiting room: calls beyond the cap are refused at once, so the count below is exact.
        UPSTREAM_ROUTE_QUEUE_LIMIT: '0',
        UPSTREAM_TIMEOUT_MS: '2000',
        // One key here: this suite measures the route's cap, not the share of one caller.
        UPSTREAM_CALLER_SHARE: '1',
      },
    });
    key = newKey('breaker');
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    transaction = await make.transaction({ customer: { id: customer.id } });
    // The route's breaker opens on failures spread over keys (BREAKER_MIN_KEYS, 3): two more tenants.
    for (const label of ['breaker-2', 'breaker-3']) {
      const other = newKey(label);
      const made = factories(stack.emulator, other);
      others.push({ key: other, transaction: await made.transaction({ customer: { id: (await made.customer()).id } }) });
    }
  });
  afterAll(() => stack.stop());
  beforeEach(async () => {
    await stack.admin('DELETE', '/_emulator/faults');
    await stack.resetCounts();
  });

  const read = () => stack.gql<{ transaction: { customer: unknown } }>(TX_WITH_CUSTOMER, { id: String(transaction.id) }, key);
  const readAs = (account: { key: string; transaction: RestObject }) =>
    stack.gql<{ transaction: { customer: unknown } }>(TX_WITH_CUSTOMER, { id: String(account.transaction.id) }, account.key);

  it('opens on a route failing for every key, fails fast without calling it, then closes after a good half-open trial', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 500 });
    const accounts = [{ key, transaction }, ...others];
    for (let i = 0; i < 4; i++) expect(codes(await readAs(accounts[i % accounts.length]!))).toEqual(['UPSTREAM_ERROR']);
    const callsWhenOpened = await stack.upstreamCalls('GET /v1/customers/:id');

    const fast = await read();

    expect(fast.errors![0]).toMatchObject({ path: ['transaction', 'customer'], extensions: { code: 'UPSTREAM_UNAVAILABLE', reason: 'circuit_open' } });
    expect(fast.data!.transaction).toMatchObject({ currency: { iso: 'XOF' } });
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(callsWhenOpened);
    expect((await readyz(stack)).body.breakers['GET /v1/customers/:id']).toBe('open');
    expect((await readyz(stack)).status).toBe(200);

    await stack.admin('DELETE', '/_emulator/faults');
    await new Promise((r) => setTimeout(r, 450));
    const recovered = await read();

    expect(recovered.errors).toBeUndefined();
    expect(recovered.data!.transaction.customer).not.toBeNull();
    expect((await readyz(stack)).body.breakers['GET /v1/customers/:id']).toBe('closed');
  });

  it('caps the calls in flight on a hanging route, and other routes keep answering', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', hang: true });

    const hanging = Array.from({ length: 5 }, () => read());
    await new Promise((r) => setTimeout(r, 100));
    const other = await stack.gql<{ payouts: { totalCount: number } }>('{ payouts(first: 1) { totalCount } }', {}, key);
    const answers = await Promise.all(hanging);

    expect(other.errors).toBeUndefined();
    const reasons = answers.map((a) => a.errors?.[0]?.extensions?.reason ?? a.errors?.[0]?.extensions?.code);
    expect(reasons.filter((r) => r === 'route_saturated')).toHaveLength(2);
    expect(reasons.filter((r) => r === 'UPSTREAM_TIMEOUT')).toHaveLength(3);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(3);
  });
});

describe('bulkhead queue', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { UPSTREAM_ROUTE_CONCURRENCY: '3', UPSTREAM_CALLER_SHARE: '1' } });
  });
  afterAll(() => stack.stop());

  it('queues a burst above the cap instead of refusing it', async () => {
    const key = newKey('burst');
    const make = factories(stack.emulator, key);
    const ids: number[] = [];
    for (let i = 0; i < 9; i++) ids.push((await make.customer()).id);
    await stack.resetCounts();
    // Nine reads of one route at once, three slots: six wait their turn.
    const query = `{ ${ids.map((id, i) => `c${i}: customer(id: "${id}") { email }`).join(' ')} }`;
    const res = await stack.gql<Record<string, { email: string } | null>>(query, {}, key);
    expect(res.errors).toBeUndefined();
    expect(Object.values(res.data!).every((c) => c?.email)).toBe(true);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(9);
  });
});
