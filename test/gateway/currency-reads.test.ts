/**
 * Currencies are read by id through the spec's endpoint 13,
 * `GET /v1/currencies/{id}`, counted at the emulator by route: one call per
 * distinct currency of an operation, none within the TTL after, and the list
 * (`GET /v1/currencies`, beyond the spec) only for what needs it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const PAGE = '{ transactions(first: 20) { nodes { id currency { iso } amountMoney { currencyIso } } } }';

interface PageAnswer {
  transactions: { nodes: { id: string; currency: { iso: string } | null; amountMoney: { currencyIso: string } | null }[] };
}

/** 20 transactions of one account, alternating its two currencies (XOF and GNF). */
async function seedTwoCurrencies(stack: Stack, key: string): Promise<RestObject[]> {
  const make = factories(stack.emulator, key);
  for (let i = 0; i < 20; i++) await make.transaction({ amount: 1000 + i, currency: { iso: i % 2 === 0 ? 'XOF' : 'GNF' } });
  return make.currencies();
}

describe('currency reads by id, per operation (no entity cache)', () => {
  let stack: Stack;
  const key = newKey('currency_reads');

  beforeAll(async () => {
    // Reads are counted per operation here: nothing is kept across requests.
    stack = await startStack({ env: { ENTITY_CACHE: 'false' } });
    await seedTwoCurrencies(stack, key);
  });
  beforeEach(() => stack.resetCounts());
  afterAll(() => stack.stop());

  it('answers transactions(first: 20) { currency } with one GET /v1/currencies/{id} per distinct currency and no list', async () => {
    const res = await stack.gql<PageAnswer>(PAGE, {}, key);
    expect(res.errors).toBeUndefined();
    const nodes = res.data!.transactions.nodes;
    expect(nodes).toHaveLength(20);
    expect(new Set(nodes.map((n) => n.currency?.iso))).toEqual(new Set(['XOF', 'GNF']));
    expect(nodes.every((n) => n.amountMoney?.currencyIso === n.currency?.iso)).toBe(true);
    expect(await stack.upstreamCalls('GET /v1/transactions')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(2);
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(0);
    expect(await stack.upstreamCalls()).toBe(3);
  });

  it('answers currency(id) through GET /v1/currencies/{id}, and null for an id of no currency of the account', async () => {
    const [xof] = (await factories(stack.emulator, key).currencies()).filter((c) => c.iso === 'XOF');
    await stack.resetCounts();
    const res = await stack.gql<{ mine: { iso: string } | null; none: null }>(
      'query ($id: ID!) { mine: currency(id: $id) { iso } none: currency(id: "999999") { iso } }',
      { id: String(xof!.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ mine: { iso: 'XOF' }, none: null });
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(2);
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(0);
  });

  it('reads the list only where it is needed: the whole list, which then answers the reads by id of the operation', async () => {
    const res = await stack.gql<{ currencies: { iso: string }[]; transactions: PageAnswer['transactions'] }>(
      `{ currencies { iso } ${PAGE.slice(1, -1)} }`,
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.currencies.map((c) => c.iso).sort()).toEqual(['GNF', 'XOF']);
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(1);
    // The page's relations may run before the list is in; never more than one read per currency.
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBeLessThanOrEqual(2);
  });
});

describe('currency reads by id, across operations (entity cache on)', () => {
  let stack: Stack;
  const key = newKey('currency_ttl');

  beforeAll(async () => {
    stack = await startStack({ env: { CURRENCY_CACHE_TTL_MS: '60000' } });
    await seedTwoCurrencies(stack, key);
  });
  beforeEach(() => stack.resetCounts());
  afterAll(() => stack.stop());

  it('reads each currency once, then none for a second operation within CURRENCY_CACHE_TTL_MS', async () => {
    const cold = await stack.gql<PageAnswer>(PAGE, {}, key);
    expect(cold.errors).toBeUndefined();
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(2);

    await stack.resetCounts();
    const warm = await stack.gql<PageAnswer>(PAGE, {}, key);
    expect(warm.data).toEqual(cold.data);
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(0);
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(0);
    // Transactions that are not final are read every time; currencies are not.
    expect(await stack.upstreamCalls()).toBe(1);
  });

  it('warms the reads by id from the list: after `currencies`, a page of relations reads no currency', async () => {
    const other = newKey('currency_warm');
    await seedTwoCurrencies(stack, other);
    await stack.resetCounts();
    expect((await stack.gql('{ currencies { iso } }', {}, other)).errors).toBeUndefined();
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(1);

    await stack.resetCounts();
    const res = await stack.gql<PageAnswer>(PAGE, {}, other);
    expect(res.errors).toBeUndefined();
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(0);
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(0);
  });
});
