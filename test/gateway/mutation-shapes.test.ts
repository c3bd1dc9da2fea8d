/**
 * Mutation shapes a frontend can trust, beyond the userErrors table
 * (user-errors.test.ts): partial payout updates, a send with the caller's own
 * token (checked against the transaction's), the customer reference's two branches, and the weakly typed string
 * inputs (EmailAddress, URL, CountryCode) that a mutation judges itself.
 * What goes on the wire is read at a scripted upstream; flows at the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/server/index.js';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import type { FakeUpstream } from '../upstream/fake-upstream.js';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.js';
import { aCurrency, aPaymentIntent, aPayout, aTransaction, enveloped } from '../upstream/fixtures.js';

interface UserErrors {
  userErrors: { field: string[] | null; code: string }[];
}

describe('what the mutations send, at a scripted upstream', () => {
  let scripted: ScriptedGateway;
  let upstream: FakeUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    scripted = await startScriptedGateway({ ENTITY_CACHE: 'false' });
    ({ upstream, gateway } = scripted);
    upstream.replyWith((req) => {
      if (req.path === '/v1/currencies') return { json: enveloped('currencies', [aCurrency()]) };
      if (req.path.startsWith('/v1/currencies/')) return { json: [aCurrency({ id: Number(req.path.split('/').pop()) })] };
      if (req.path.startsWith('/v1/payouts/')) return { json: enveloped('payout', aPayout({ id: 201, amount: 700 })) };
      if (req.path === '/v1/transactions/mtn') return { json: enveloped('payment_intents', [aPaymentIntent()]) };
      if (req.path.endsWith('/token')) return { json: { token: 'tok_from_the_gateway', url: 'https://pay.example/t' } };
      return { json: enveloped('transaction', aTransaction()) };
    });
  });
  afterAll(() => scripted?.stop());

  const gql = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk_sandbox_shapes' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, ...((await res.json()) as { data?: T; errors?: { extensions?: { code?: string } }[] }) };
  };
  const sent = (method: string, path: string) => upstream.requests.filter((r) => r.method === method && r.path === path);

  it('updatePayout(changes:) with only an amount sends only the amount', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ updatePayout: UserErrors & { payout: { id: string } } }>(
      'mutation { updatePayout(id: "201", changes: { amountDecimal: "700" }) { payout { id } userErrors { field code } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.updatePayout).toEqual({ payout: { id: '201' }, userErrors: [] });
    const puts = sent('PUT', '/v1/payouts/201');
    expect(puts).toHaveLength(1);
    expect(puts[0]!.body).toEqual({ amount: 700 });
    expect(puts[0]!.rawBody).toBe('{"amount":700}');
  });

  it('updatePayout(changes: {}) is a REQUIRED user error on changes, with no write that would change nothing', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ updatePayout: UserErrors }>('mutation { updatePayout(id: "201", changes: {}) { userErrors { field code } } }');
    expect(res.data!.updatePayout.userErrors).toEqual([{ field: ['changes'], code: 'REQUIRED' }]);
    expect(sent('PUT', '/v1/payouts/201')).toHaveLength(0);
  });

  it('updatePayout(changes:) with a mode and a customer id sends those and no amount or currency', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ updatePayout: UserErrors }>(
      'mutation { updatePayout(id: "201", changes: { mode: "moov", customer: { id: "7" } }) { userErrors { field code } } }',
    );
    expect(res.data!.updatePayout.userErrors).toEqual([]);
    expect(sent('PUT', '/v1/payouts/201')[0]!.body).toEqual({ mode: 'moov', customer: { id: 7 } });
    // No amount, so nothing to check against the currency: no read either.
    expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['PUT /v1/payouts/201']);
  });

  it('updatePayout(input:) still sends create\'s whole shape', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ updatePayout: UserErrors }>(
      'mutation ($input: PayoutInput!) { updatePayout(id: "201", input: $input) { userErrors { field code } } }',
      { input: { amountDecimal: '250', currency: { iso: 'XOF' }, mode: 'mtn' } },
    );
    expect(res.data!.updatePayout.userErrors).toEqual([]);
    expect(sent('PUT', '/v1/payouts/201')[0]!.body).toEqual({ amount: 250, currency: { iso: 'XOF' }, mode: 'mtn' });
  });

  it('sendTransaction(token:) with the transaction\'s own token sends it, after the token call that proves it is its own', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ sendTransaction: UserErrors & { paymentIntents: { status: string }[] } }>(
      `mutation { sendTransaction(id: "101", mode: "mtn", token: "tok_from_the_gateway", phoneNumber: { number: "64000001", country: "BJ" }) {
          paymentIntents { status } userErrors { field code } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.sendTransaction).toEqual({ paymentIntents: [{ status: 'PENDING' }], userErrors: [] });
    expect(sent('POST', '/v1/transactions/101/token')).toHaveLength(1);
    const sends = sent('POST', '/v1/transactions/mtn');
    expect(sends).toHaveLength(1);
    expect(sends[0]!.body).toEqual({ token: 'tok_from_the_gateway', phone_number: { number: '64000001', country: 'bj' } });
  });

  it('sendTransaction(token:) with a token that is not the transaction\'s is INVALID on token, and nothing is sent', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ sendTransaction: UserErrors & { paymentIntents: unknown[] } }>(
      `mutation { sendTransaction(id: "101", mode: "mtn", token: "tok_of_another_transaction") { paymentIntents { status } userErrors { field code } } }`,
    );
    expect(res.data!.sendTransaction).toEqual({ paymentIntents: [], userErrors: [{ field: ['token'], code: 'INVALID' }] });
    expect(sent('POST', '/v1/transactions/mtn')).toHaveLength(0);
  });

  it('sendTransaction without a token gets one, then sends it', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ sendTransaction: UserErrors }>('mutation { sendTransaction(id: "101", mode: "mtn") { userErrors { field code } } }');
    expect(res.data!.sendTransaction.userErrors).toEqual([]);
    expect(sent('POST', '/v1/transactions/101/token')).toHaveLength(1);
    expect(sent('POST', '/v1/transactions/mtn')[0]!.body).toEqual({ token: 'tok_from_the_gateway' });
  });

  it('a URL input is sent as the caller wrote it', async () => {
    upstream.requests.length = 0;
    const res = await gql<{ createTransaction: UserErrors }>(
      'mutation ($u: URL) { createTransaction(input: { amountDecimal: "100", description: "x", currency: { iso: "XOF" }, callbackUrl: $u }) { userErrors { field code } } }',
      { u: 'https://Shop.example.com/cb?x=1' },
    );
    expect(res.data!.createTransaction.userErrors).toEqual([]);
    expect((sent('POST', '/v1/transactions')[0]!.body as { callback_url: string }).callback_url).toBe('https://Shop.example.com/cb?x=1');
  });
});

describe('customer references and weakly typed inputs, at the emulator', () => {
  let stack: Stack;
  const key = newKey('shapes');

  beforeAll(async () => {
    stack = await startStack({ emulator: { settleMs: 60_000 }, env: { ENTITY_CACHE: 'false' } });
  });
  afterAll(() => stack.stop());

  const createTransaction = (customer: unknown) =>
    stack.gql<{ createTransaction: UserErrors & { transaction: { customer: { id: string; email: string } | null } | null } }>(
      `mutation ($customer: CustomerRefInput) { createTransaction(input: { amountDecimal: "100", description: "x", currency: { iso: "XOF" }, customer: $customer }) {
          transaction { customer { id email } } userErrors { field code } } }`,
      { customer },
      key,
    );

  it('a customer by id alone is that customer', async () => {
    const c = await factories(stack.emulator, key).customer();
    const res = await createTransaction({ id: String(c.id) });
    expect(res.data!.createTransaction).toEqual({ transaction: { customer: { id: String(c.id), email: c.email } }, userErrors: [] });
  });

  it('a customer by details alone is created inline', async () => {
    const res = await createTransaction({ firstname: 'Kofi', lastname: 'Annan', email: 'kofi.inline@example.com', phoneNumber: { number: '64000001', country: 'bj' } });
    expect(res.data!.createTransaction.userErrors).toEqual([]);
    expect(res.data!.createTransaction.transaction!.customer).toMatchObject({ email: 'kofi.inline@example.com' });
  });

  it('a customer by id and details is refused on the customer, with no upstream write', async () => {
    const c = await factories(stack.emulator, key).customer();
    await stack.resetCounts();
    const res = await createTransaction({ id: String(c.id), firstname: 'Other' });
    expect(res.data!.createTransaction).toEqual({ transaction: null, userErrors: [{ field: ['input', 'customer'], code: 'INVALID' }] });
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });

  it.each([
    ['$email: EmailAddress!', 'email: $email', { email: 'not-an-address' }, ['input', 'email']],
    ['$country: CountryCode!', 'email: "ok@example.com", phoneNumber: { number: "1", country: $country }', { country: 'ZZ' }, ['input', 'phoneNumber', 'country']],
  ])('an operation declaring %s still works: a bad value is HTTP 200 with a user error and no write', async (declaration, fields, variables, field) => {
    await stack.resetCounts();
    const res = await stack.gql<{ createCustomer: UserErrors & { customer: null } }>(
      `mutation (${declaration}) { createCustomer(input: { firstname: "A", lastname: "B", ${fields} }) { customer { id } userErrors { field code } } }`,
      variables,
      key,
    );
    expect(res.status).toBe(200);
    expect(res.data!.createCustomer).toEqual({ customer: null, userErrors: [{ field, code: 'INVALID' }] });
    expect(await stack.upstreamCalls('POST /v1/customers')).toBe(0);
  });

  it('a relative callback URL is HTTP 200 with a user error and no write', async () => {
    await stack.resetCounts();
    const res = await stack.gql<{ createTransaction: UserErrors }>(
      'mutation ($u: URL!) { createTransaction(input: { amountDecimal: "100", description: "x", currency: { iso: "XOF" }, callbackUrl: $u }) { userErrors { field code } } }',
      { u: '/checkout/done' },
      key,
    );
    expect(res.status).toBe(200);
    expect(res.data!.createTransaction.userErrors).toEqual([{ field: ['input', 'callbackUrl'], code: 'INVALID' }]);
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });

  it('a non-string for a weakly typed input is still refused as a request error', async () => {
    const res = await stack.gql('mutation ($e: EmailAddress!) { createCustomer(input: { firstname: "A", lastname: "B", email: $e }) { userErrors { code } } }', { e: 42 }, key);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  // updatePayout(id, input) is in the design's outside contract (contract-check introspects it, and
  // introspection hides deprecated arguments), so `input` stays undeprecated beside `changes`.
  it('the old ways stay: updateTransaction(input: { status }) deprecated, updatePayout(input:) visible beside changes', async () => {
    const res = await stack.gql<{ tx: { inputFields: { name: string; isDeprecated: boolean }[] }; m: { fields: { name: string; args: { name: string; isDeprecated: boolean }[] }[] } }>(
      `{ tx: __type(name: "UpdateTransactionInput") { inputFields(includeDeprecated: true) { name isDeprecated } }
         m: __type(name: "Mutation") { fields { name args(includeDeprecated: true) { name isDeprecated } } } }`,
    );
    expect(res.data!.tx.inputFields.find((f) => f.name === 'status')).toEqual({ name: 'status', isDeprecated: true });
    const updatePayout = res.data!.m.fields.find((f) => f.name === 'updatePayout')!;
    expect(updatePayout.args.filter((a) => a.name !== 'idempotencyKey')).toEqual([
      { name: 'id', isDeprecated: false },
      { name: 'changes', isDeprecated: false },
      { name: 'input', isDeprecated: false },
    ]);
  });

  it('customers(filter: { email }) with a malformed address is BAD_USER_INPUT with no upstream call', async () => {
    await stack.resetCounts();
    const res = await stack.gql('{ customers(filter: { email: "nope" }) { nodes { id } } }', {}, key);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.email' });
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('sendTransaction with the token createTransactionToken gave sends it, its token proven by one token call', async () => {
    const t = await factories(stack.emulator, key).transaction();
    const tokenRes = await stack.gql<{ createTransactionToken: { token: string } }>(
      'mutation ($id: ID!) { createTransactionToken(id: $id) { token } }',
      { id: String(t.id) },
      key,
    );
    const token = tokenRes.data!.createTransactionToken.token;
    await stack.resetCounts();
    const res = await stack.gql<{ sendTransaction: UserErrors & { paymentIntents: { mode: string }[] } }>(
      `mutation ($id: ID!, $token: String) { sendTransaction(id: $id, mode: "mtn", token: $token, phoneNumber: { number: "64000001", country: "BJ" }) {
          paymentIntents { mode } userErrors { field code } } }`,
      { id: String(t.id), token },
      key,
    );
    expect(res.data!.sendTransaction).toEqual({ paymentIntents: [{ mode: 'mtn' }], userErrors: [] });
    expect(await stack.upstreamCalls('POST /v1/transactions/:id/token')).toBe(1);
    expect(await stack.upstreamCalls('POST /v1/transactions/:mode')).toBe(1);
  });

  it('updatePayout(changes:) with only an amount leaves the rest of the payout as it was', async () => {
    const c = await factories(stack.emulator, key).customer();
    const p = await factories(stack.emulator, key).payout({ customer: { id: c.id }, mode: 'moov', amount: 500 });
    const res = await stack.gql<{ updatePayout: UserErrors & { payout: { amountMoney: { amount: string }; mode: string; customer: { id: string } } } }>(
      'mutation ($id: ID!) { updatePayout(id: $id, changes: { amountDecimal: "900" }) { payout { amountMoney { amount } mode customer { id } } userErrors { field code } } }',
      { id: String(p.id) },
      key,
    );
    expect(res.data!.updatePayout).toEqual({ payout: { amountMoney: { amount: '900' }, mode: 'moov', customer: { id: String(c.id) } }, userErrors: [] });
  });
});
