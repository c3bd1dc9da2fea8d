import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('batching: upstream requests counted at the emulator', () => {
  let stack: Stack;
  const key = newKey('batching');
  let customers: RestObject[];

  beforeAll(async () => {
    // Per-request batching is what is counted here, so customers are not kept
    // across requests; test/gateway/entity-cache.test.ts counts the cache.
    stack = await startStack({ env: { CUSTOMER_CACHE_TTL_MS: '0' } });
    const make = factories(stack.emulator, key);
    customers = [];
    for (let i = 0; i < 10; i++) customers.push(await make.customer());
    for (let i = 0; i < 50; i++) await make.payout({ amount: 100 + i, customer: { id: customers[i % 10]!.id } });
  });
  beforeEach(() => stack.resetCounts());
  afterAll(() => stack.stop());

  const PAYOUTS_WITH_RELATIONS = '{ payouts(first: 50) { totalCount nodes { id customer { fullName } currency { iso } } } }';

  it('reads 50 payouts of 10 customers with 1 search, 10 customer reads and 1 currency read by id (0 when warm)', async () => {
    // A fresh caller key: its currency cache is cold.
    const cold = await stack.gql<{ payouts: { totalCount: number; nodes: { customer: { fullName: string } | null; currency: { iso: string } }[] } }>(
      PAYOUTS_WITH_RELATIONS, {}, key);
    expect(cold.errors).toBeUndefined();
    expect(cold.data!.payouts.nodes).toHaveLength(50);
    expect(cold.data!.payouts.nodes.every((n) => n.customer?.fullName && n.currency.iso === 'XOF')).toBe(true);
    expect(await stack.upstreamCalls('GET /v1/payouts/search')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(10);
    // One currency (XOF) among the 50: one read by id, through the spec's endpoint, and no list.
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(0);
    expect(await stack.upstreamCalls()).toBe(12);

    await stack.resetCounts();
    const warm = await stack.gql(PAYOUTS_WITH_RELATIONS, {}, key);
    expect(warm.errors).toBeUndefined();
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(0);
    expect(await stack.upstreamCalls()).toBe(11);
  });

  it('answers customer { id } from the foreign key, with no customer read', async () => {
    const res = await stack.gql<{ payouts: { nodes: { customer: { id: string } }[] } }>(
      '{ payouts(first: 50) { nodes { customer { id __typename } currency { id } } } }', {}, key);
    expect(res.errors).toBeUndefined();
    expect(new Set(res.data!.payouts.nodes.map((n) => n.customer.id)).size).toBe(10);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(0);
    expect(await stack.upstreamCalls()).toBe(1);
  });

  it('reads the same customer once when two aliases and a relation ask for it', async () => {
    const c = customers[0]!;
    const res = await stack.gql<{ a: { email: string }; b: { fullName: string } }>(
      'query ($id: ID!) { a: customer(id: $id) { email } b: customer(id: $id) { fullName } }', { id: String(c.id) }, key);
    expect(res.errors).toBeUndefined();
    expect(res.data!.a.email).toBe(c.email);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(1);
  });

  it('reads a customer once per request, whichever list points at it', async () => {
    const res = await stack.gql<{ payouts: { nodes: { customer: { email: string } }[] }; again: { nodes: { customer: { email: string } }[] } }>(
      '{ payouts(first: 20) { nodes { customer { email } } } again: payouts(first: 30) { nodes { customer { email } } } }', {}, key);
    expect(res.errors).toBeUndefined();
    expect(res.data!.again.nodes).toHaveLength(30);
    expect(await stack.upstreamCalls('GET /v1/payouts/search')).toBe(2);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(10);
  });
});
