/**
 * Money through the whole gateway: emulator -> gateway -> client for the
 * amounts the emulator can hold, and a scripted upstream for those it cannot
 * (beyond 2^53, more decimals than a double), both ways: read and sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/server/index.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import type { FakeUpstream } from '../upstream/fake-upstream.js';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.js';
import { anEvent, aTransaction } from '../upstream/fixtures.js';

interface Money {
  amount: string;
  currencyIso: string;
}

describe('money against the emulator', () => {
  let stack: Stack;
  const key = newKey('money');

  beforeAll(async () => {
    stack = await startStack({ emulator: { settleMs: 60_000 } });
  });
  afterAll(() => stack.stop());

  const create = (amountDecimal: unknown, iso = 'XOF') =>
    stack.gql<{ createTransaction: { transaction: { amount: number; amountMoney: Money; feesMoney: Money | null } | null; userErrors: { field: string[]; message: string; code: string }[] } }>(
      `mutation ($a: Decimal, $iso: String!) { createTransaction(input: { amountDecimal: $a, description: "x", currency: { iso: $iso } }) {
          transaction { amount amountMoney { amount currencyIso } feesMoney { amount currencyIso } } userErrors { field message code } } }`,
      { a: amountDecimal, iso },
      key,
    );

  it('creates with a decimal string and reads Money back, the deprecated Float still answering', async () => {
    const res = await create('2500');
    expect(res.errors).toBeUndefined();
    expect(res.data!.createTransaction.userErrors).toEqual([]);
    expect(res.data!.createTransaction.transaction).toMatchObject({ amount: 2500, amountMoney: { amount: '2500', currencyIso: 'XOF' } });
    expect(res.data!.createTransaction.transaction!.feesMoney).toEqual({ amount: expect.stringMatching(/^\d+(\.\d+)?$/), currencyIso: 'XOF' });
  });

  it.each([
    ['2500.5', /no minor unit/],
    ['0', /greater than 0/],
    ['-100', /greater than 0/],
  ])('refuses %s XOF with a userError on input.amountDecimal, before any upstream call', async (amount, message) => {
    await stack.resetCounts();
    const res = await create(amount);
    expect(res.errors).toBeUndefined();
    expect(res.data!.createTransaction).toEqual({
      transaction: null,
      userErrors: [{ field: ['input', 'amountDecimal'], message: expect.stringMatching(message), code: 'INVALID' }],
    });
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('refuses a malformed Decimal, a JSON number included, as BAD_USER_INPUT', async () => {
    for (const bad of [2500, '1e3', '12,5']) {
      const res = await create(bad);
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });

  it('checks the decimals of an updated amount against the transaction currency', async () => {
    const created = await stack.gql<{ createTransaction: { transaction: { id: string } } }>(
      'mutation { createTransaction(input: { amountDecimal: "100", description: "x", currency: { iso: "XOF" } }) { transaction { id } } }',
      {},
      key,
    );
    const id = created.data!.createTransaction.transaction.id;
    const update = (a: string) =>
      stack.gql<{ updateTransaction: { transaction: { amountMoney: Money } | null; userErrors: { field: string[] }[] } }>(
        'mutation ($id: ID!, $a: Decimal) { updateTransaction(id: $id, input: { amountDecimal: $a }) { transaction { amountMoney { amount } } userErrors { field } } }',
        { id, a },
        key,
      );
    expect((await update('150.25')).data!.updateTransaction).toEqual({ transaction: null, userErrors: [{ field: ['input', 'amountDecimal'] }] });
    expect((await update('150')).data!.updateTransaction).toEqual({ transaction: { amountMoney: { amount: '150' } }, userErrors: [] });
  });

  it('holds the deprecated Float amount to the same currency rule: 100.5 XOF is refused on its field', async () => {
    await stack.resetCounts();
    const res = await stack.gql<{ createTransaction: { transaction: unknown; userErrors: { field: string[]; code: string }[] } }>(
      'mutation { createTransaction(input: { amount: 100.5, description: "x", currency: { iso: "XOF" } }) { transaction { id } userErrors { field code } } }',
      {},
      key,
    );
    expect(res.data!.createTransaction).toEqual({ transaction: null, userErrors: [{ field: ['input', 'amount'], code: 'INVALID' }] });
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });

  it('answers a replayed idempotent create with the same exact amounts', async () => {
    const run = () =>
      stack.gql<{ createTransaction: { transaction: { id: string; amount: number; amountMoney: Money } } }>(
        `mutation { createTransaction(input: { amountDecimal: "4200", description: "x", currency: { iso: "XOF" } }, idempotencyKey: "money-replay") {
            transaction { id amount amountMoney { amount currencyIso } } } }`,
        {},
        key,
      );
    const first = await run();
    await stack.resetCounts();
    const replay = await run();
    expect(replay.errors).toBeUndefined();
    expect(replay.data).toEqual(first.data);
    expect(first.data!.createTransaction.transaction).toMatchObject({ amount: 4200, amountMoney: { amount: '4200', currencyIso: 'XOF' } });
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });

  it('costs at most one currency read by id for every Money field of an operation', async () => {
    const created = await create('700');
    expect(created.errors).toBeUndefined();
    await stack.resetCounts();
    const res = await stack.gql('query { transactions(first: 5) { nodes { amountMoney { amount } feesMoney { amount } amountDebitedMoney { amount } } } }', {}, key);
    expect(res.errors).toBeUndefined();
    // Warm already from the create above (the entity cache), else one read of XOF by id.
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBeLessThanOrEqual(1);
    expect(await stack.upstreamCalls()).toBe(1 + (await stack.upstreamCalls('GET /v1/currencies/:id')));
  });
});

describe('money beyond what a double holds, through a scripted upstream', () => {
  let scripted: ScriptedGateway;
  let upstream: FakeUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    scripted = await startScriptedGateway({});
    ({ upstream, gateway } = scripted);
  });
  afterAll(() => scripted?.stop());

  const usd = { klass: 'v1/currency', id: 1, iso: 'USD', name: 'Dollar', div: 100, modes: [], default: true };
  /** The transaction with these raw number tokens, as text so no JS number ever holds them. */
  const transactionText = (amount: string, fees: string) =>
    JSON.stringify({ 'v1/transaction': aTransaction({ amount: '@A@', fees: '@F@', currency_id: 1 }) })
      .replace('"@A@"', amount)
      .replace('"@F@"', fees);

  const gql = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk_sandbox_money_exact' },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: T; errors?: unknown[] };
  };

  it.each([
    ['9007199254740993', '0.1234567890123456789', '9007199254740993', '0.1234567890123456789'],
    ['123456789012345678901234567890.05', '1e-20', '123456789012345678901234567890.05', '0.00000000000000000001'],
    ['9007199254740993.99', '2.50', '9007199254740993.99', '2.5'],
  ])('reads %s and %s exactly', async (amount, fees, expectedAmount, expectedFees) => {
    upstream.replyWith((req) =>
      // A currency by id, as the spec answers it: an array of one.
      req.path.startsWith('/v1/currencies/') ? { json: [usd] } : { text: transactionText(amount, fees) },
    );
    const res = await gql<{ transaction: { amountMoney: Money; feesMoney: Money } }>(
      'query { transaction(id: "101") { amountMoney { amount currencyIso } feesMoney { amount currencyIso } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.transaction).toEqual({
      amountMoney: { amount: expectedAmount, currencyIso: 'USD' },
      feesMoney: { amount: expectedFees, currencyIso: 'USD' },
    });
  });

  it('sends an amount upstream as a JSON number token with exactly the given digits', async () => {
    upstream.replyWith((req) =>
      req.method === 'POST' ? { status: 201, text: transactionText('9007199254740993.25', '0') } : { json: [usd] },
    );
    const res = await gql<{ createTransaction: { transaction: { amountMoney: Money }; userErrors: unknown[] } }>(
      'mutation { createTransaction(input: { amountDecimal: "9007199254740993.25", description: "x", currency: { iso: "USD" } }) { transaction { amountMoney { amount } } userErrors { message } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.createTransaction).toEqual({ transaction: { amountMoney: { amount: '9007199254740993.25' } }, userErrors: [] });
    const sent = upstream.requests.find((r) => r.method === 'POST');
    expect(sent?.rawBody).toContain('"amount":9007199254740993.25');
  });

  it.each([
    ['no object', {}],
    // The type's prefix types the entity; an `object` in another form must not cost its amounts their digits.
    ['a klass-style object', { object: 'v1/transaction' }],
  ])("reads an event's entity amounts exactly too (the events API; %s), and shows them as numbers in rawEntity", async (_case, extra) => {
    const eventText = JSON.stringify({ 'v1/event': anEvent({ id: 77, ...extra, entity: aTransaction({ amount: '@A@', fees: '@F@', currency_id: 1 }) }) })
      .replace('"@A@"', '9007199254740993.25')
      .replace('"@F@"', '0.1234567890123456789');
    upstream.replyWith((req) => (req.path.startsWith('/v1/currencies/') ? { json: [usd] } : { text: eventText }));
    const res = await gql<{ event: { entity: { amountMoney: Money; feesMoney: Money }; rawEntity: { amount: number } } }>(
      'query { event(id: "77") { entity { ... on Transaction { amountMoney { amount currencyIso } feesMoney { amount currencyIso } } } rawEntity } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.event.entity).toEqual({
      amountMoney: { amount: '9007199254740993.25', currencyIso: 'USD' },
      feesMoney: { amount: '0.1234567890123456789', currencyIso: 'USD' },
    });
    // JSON has no exact decimals: the raw entity is the upstream's JSON, read as numbers.
    expect(res.data!.event.rawEntity.amount).toBe(Number('9007199254740993.25'));
  });
});
