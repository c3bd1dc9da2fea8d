import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('errors', () => {
  let stack: Stack;
  const key = newKey('errors');
  let transaction: RestObject;

  beforeAll(async () => {
    stack = await startStack({ env: { UPSTREAM_TIMEOUT_MS: '500' } });
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    transaction = await make.transaction({ customer: { id: customer.id } });
  });
  afterEach(() => stack.admin('DELETE', '/_emulator/faults'));
  afterAll(() => stack.stop());

  it('refuses an operation without Authorization as UNAUTHENTICATED, before any upstream call', async () => {
    await stack.resetCounts();
    const res = await stack.gql('{ currencies { iso } transactions { totalCount } }', {}, null);
    expect(res.status).toBe(401);
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('serves introspection and the federation SDL without a key', async () => {
    const res = await stack.gql<{ __schema: { queryType: { name: string } }; _service: { sdl: string } }>(
      '{ __schema { queryType { name } } _service { sdl } }', {}, null);
    expect(res.errors).toBeUndefined();
    expect(res.data!.__schema.queryType.name).toBe('Query');
    expect(res.data!._service.sdl).toMatch(/type Transaction\s+@key\(fields: "id"\)/);
  });

  it.each([
    ['a live key against a sandbox gateway', 'sk_live_abc123', 'FORBIDDEN', /sandbox environment; a live key/],
    ['a malformed key', 'not-a-key', 'UNAUTHENTICATED', /malformed/],
  ])('refuses %s with a message that says so', async (_label, badKey, code, message) => {
    await stack.resetCounts();
    const res = await stack.gql('{ currencies { iso } }', {}, badKey);
    expect(res.errors?.[0]?.extensions?.code).toBe(code);
    expect(res.errors?.[0]?.message).toMatch(message);
    expect(JSON.stringify(res)).not.toContain(badKey);
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('refuses a sandbox key against a live gateway', async () => {
    const live = await startStack({ env: { PAYMENTS_ENV: 'live' } });
    try {
      const res = await live.gql('{ currencies { iso } }', {}, key);
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(res.errors?.[0]?.message).toMatch(/live environment; a sandbox key/);
    } finally {
      await live.stop();
    }
  });

  it('answers null, without an error, for an unknown id', async () => {
    const res = await stack.gql('{ transaction(id: "999999") { id } payout(id: "999998") { id } customer(id: "999997") { id } }', {}, key);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ transaction: null, payout: null, customer: null });
  });

  it("answers null for another account's object", async () => {
    const res = await stack.gql('query ($id: ID!) { transaction(id: $id) { id } }', { id: String(transaction.id) }, newKey('other'));
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ transaction: null });
  });

  it('refuses a malformed id and an oversized page as BAD_USER_INPUT', async () => {
    const res = await stack.gql('{ transaction(id: "abc") { id } }', {}, key);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const page = await stack.gql('{ payouts(first: 101) { totalCount } }', {}, key);
    expect(page.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(page.errors?.[0]?.message).toMatch(/between 1 and 100/);
    const cursor = await stack.gql('{ payouts(after: "bogus") { totalCount } }', {}, key);
    expect(cursor.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('turns invalid input into userErrors, checked by the gateway before calling upstream', async () => {
    await stack.resetCounts();
    const res = await stack.gql<{ createTransaction: { transaction: null; userErrors: { field: string[]; code: string }[] } }>(
      'mutation { createTransaction(input: { amount: -5, description: "x", currency: { iso: "XOFX" } }) { transaction { id } userErrors { field message code } } }',
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.createTransaction.transaction).toBeNull();
    expect(res.data!.createTransaction.userErrors.map((e) => e.field)).toEqual([['input', 'amount'], ['input', 'currency', 'iso']]);
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it("turns the upstream's field errors into userErrors", async () => {
    const res = await stack.gql<{ createPayout: { payout: null; userErrors: { field: string[]; code: string; message: string }[] } }>(
      'mutation { createPayout(input: { amount: 100, currency: { iso: "ZZZ" } }) { payout { id } userErrors { field message code } } }',
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.createPayout.payout).toBeNull();
    expect(res.data!.createPayout.userErrors).toContainEqual(
      expect.objectContaining({ field: ['input', 'currency', 'iso'], code: expect.stringMatching(/INVALID|REQUIRED/) }),
    );
  });

  it('a refusal the upstream gives without a field map is one UNKNOWN userError with its message', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/customers', status: 422, times: 1, body: { message: 'Account creation failed', errors: {} } });
    const res = await stack.gql<{ createCustomer: { userErrors: { field: string[] | null; code: string; message: string }[] } }>(
      'mutation { createCustomer(input: { firstname: "A", lastname: "B", email: "unknown-refusal@example.com" }) { customer { id } userErrors { field message code } } }',
      {},
      key,
    );
    expect(res.data!.createCustomer.userErrors).toEqual([{ field: null, message: 'Account creation failed', code: 'UNKNOWN' }]);
  });

  it('answers NOT_FOUND as a userError when a mutation names an unknown object', async () => {
    const res = await stack.gql<{ updateTransaction: { userErrors: { code: string }[] } }>(
      'mutation { updateTransaction(id: "999999", input: { description: "x" }) { transaction { id } userErrors { field code } } }',
      {},
      key,
    );
    expect(res.data!.updateTransaction.userErrors).toEqual([{ field: ['id'], code: 'NOT_FOUND' }]);
  });

  it.each([
    ['a 5xx', { status: 500 }, 'UPSTREAM_ERROR'],
    ['a 503', { status: 503 }, 'UPSTREAM_UNAVAILABLE'],
    ['a malformed body', { malformed: true }, 'UPSTREAM_ERROR'],
    ['a reset connection', { reset: true }, 'UPSTREAM_UNAVAILABLE'],
    ['a hang past the time-out', { hang: true }, 'UPSTREAM_TIMEOUT'],
    ['a 429', { status: 429, retryAfter: 7 }, 'RATE_LIMITED'],
  ])('nulls only the customer relation on %s, with code %s, and keeps the rest', async (_label, fault, code) => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', ...fault });
    const res = await stack.gql<{ transaction: { id: string; amount: number; customer: null; currency: { iso: string } } }>(
      'query ($id: ID!) { transaction(id: $id) { id amount customer { email } currency { iso } } }',
      { id: String(transaction.id) },
      key,
    );
    expect(res.data!.transaction).toEqual({ id: String(transaction.id), amount: 1000, customer: null, currency: { iso: 'XOF' } });
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0]).toMatchObject({ path: ['transaction', 'customer'], extensions: { code } });
    const text = JSON.stringify(res.errors);
    expect(text).not.toContain(key);
    expect(text).not.toMatch(/stack|at .*\.ts/);
  });
});
