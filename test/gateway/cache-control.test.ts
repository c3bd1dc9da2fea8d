/**
 * The Cache-Control a router's response cache keys on: decided from the
 * document's types (customers and currencies for their TTL, transactions and
 * payouts only when final), always private, and `no-store` for anything else,
 * an answer with errors included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('Cache-Control from cache hints', () => {
  let stack: Stack;
  const key = newKey('hints');
  let final: RestObject;
  let pending: RestObject;
  let payout: RestObject;

  beforeAll(async () => {
    stack = await startStack({ env: { FINAL_OBJECT_CACHE_TTL_MS: '3600000', CUSTOMER_CACHE_TTL_MS: '30000', CURRENCY_CACHE_TTL_MS: '120000', RATE_LIMIT_PER_MINUTE: '0' } });
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    final = await make.transaction({ customer: { id: customer.id } });
    await make.rest('PUT', `/v1/transactions/${final.id}`, { status: 'canceled' });
    pending = await make.transaction({ customer: { id: customer.id } });
    payout = await make.payout();
  });
  afterAll(() => stack.stop());

  /** The answer's Cache-Control and its errors. */
  const answer = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    return { cacheControl: res.headers.get('cache-control'), errors: body.errors };
  };
  /** The Cache-Control of an answer without errors (one with errors is a test of its own, below). */
  const cacheControl = async (query: string, variables: Record<string, unknown> = {}) => {
    const { cacheControl, errors } = await answer(query, variables);
    expect(errors).toBeUndefined();
    return cacheControl;
  };

  it('keeps a final transaction for the final TTL, and for the shortest TTL of what it selects', async () => {
    expect(await cacheControl('query ($id: ID!) { transaction(id: $id) { id status } }', { id: String(final.id) })).toBe('private, max-age=3600');
    expect(await cacheControl('query ($id: ID!) { transaction(id: $id) { state: status amountMoney { amount } customer { email } } }', { id: String(final.id) })).toBe(
      'private, max-age=30',
    );
    expect(await cacheControl('query ($id: ID!) { transaction(id: $id) { status currency { iso } } }', { id: String(final.id) })).toBe('private, max-age=120');
  });

  it('keeps nothing of a transaction or payout the answer shows not final', async () => {
    expect(await cacheControl('query ($id: ID!) { transaction(id: $id) { id status } }', { id: String(pending.id) })).toBe('private, no-store');
    expect(await cacheControl('query ($id: ID!) { payout(id: $id) { id status } }', { id: String(payout.id) })).toBe('private, no-store');
  });

  it('keeps nothing of a transaction whose status is not selected: its finality is unknown', async () => {
    expect(await cacheControl('query ($id: ID!) { transaction(id: $id) { id } }', { id: String(final.id) })).toBe('private, no-store');
  });

  it('judges each entity a router asks for through _entities', async () => {
    const entities = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Transaction { id status } } }';
    expect(await cacheControl(entities, { r: [{ __typename: 'Transaction', id: String(final.id) }] })).toBe('private, max-age=3600');
    const both = [{ __typename: 'Transaction', id: String(final.id) }, { __typename: 'Transaction', id: String(pending.id) }];
    expect(await cacheControl(entities, { r: both })).toBe('private, no-store');
  });

  it('keeps nothing, and tags nothing, where a transaction, payout or customer asked for is not found: it may exist a moment later', async () => {
    const notFound = async (query: string, variables: Record<string, unknown>) => {
      const res = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: Record<string, unknown>; extensions?: Record<string, unknown> };
      return { cacheControl: res.headers.get('cache-control'), data: body.data, tags: Object.keys(body.extensions ?? {}).filter((k) => /CacheTags$/.test(k)) };
    };
    const transaction = await notFound('query ($id: ID!) { transaction(id: $id) { id status } }', { id: '999999' });
    expect(transaction).toEqual({ cacheControl: 'private, no-store', data: { transaction: null }, tags: [] });
    const payoutAnswer = await notFound('query ($id: ID!) { p: payout(id: $id) { id status } }', { id: '999999' });
    expect(payoutAnswer).toEqual({ cacheControl: 'private, no-store', data: { p: null }, tags: [] });
    const payoutEntities = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Payout { id status } } }';
    const unknownPayout = await notFound(payoutEntities, { r: [{ __typename: 'Payout', id: '999999' }] });
    const entities = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Transaction { id status } } }';
    expect(unknownPayout).toEqual({ cacheControl: 'private, no-store', data: { _entities: [null] }, tags: [] });
    const finalAndUnknown = await notFound(entities, { r: [{ __typename: 'Transaction', id: String(final.id) }, { __typename: 'Transaction', id: '999999' }] });
    expect(finalAndUnknown.cacheControl).toBe('private, no-store');
    // The same final transaction alone is still kept: the rule is about the null, not the document.
    expect((await notFound(entities, { r: [{ __typename: 'Transaction', id: String(final.id) }] })).cacheControl).toBe('private, max-age=3600');

    // A customer is kept for its TTL without being final, so only the null tells: one that does not exist, or another account's.
    const customer = 'query ($id: ID!) { customer(id: $id) { id } }';
    expect(await notFound(customer, { id: '999999' })).toEqual({ cacheControl: 'private, no-store', data: { customer: null }, tags: [] });
    const theirs = await factories(stack.emulator, newKey('hints-neighbour')).customer();
    expect(await notFound(customer, { id: String(theirs.id) })).toEqual({ cacheControl: 'private, no-store', data: { customer: null }, tags: [] });
    const customerEntities = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Customer { id } } }';
    const unknownCustomer = await notFound(customerEntities, { r: [{ __typename: 'Customer', id: '999999' }] });
    expect(unknownCustomer).toEqual({ cacheControl: 'private, no-store', data: { _entities: [null] }, tags: [] });
    const ours = await factories(stack.emulator, key).customer();
    const oursAndTheirs = await notFound(customerEntities, { r: [{ __typename: 'Customer', id: String(ours.id) }, { __typename: 'Customer', id: String(theirs.id) }] });
    expect(oursAndTheirs).toEqual({ cacheControl: 'private, no-store', data: { _entities: [{ id: String(ours.id) }, null] }, tags: [] });
    // One that exists is still kept, and tagged.
    const found = await notFound(customer, { id: String(ours.id) });
    expect(found).toEqual({ cacheControl: 'private, max-age=30', data: { customer: { id: String(ours.id) } }, tags: ['apolloCacheTags'] });
  });

  it('keeps currencies and customers for their TTL, and no list whose members change', async () => {
    expect(await cacheControl('{ currencies { iso } }')).toBe('private, max-age=120');
    expect(await cacheControl('{ transactions(first: 2) { nodes { id status } } }')).toBe('private, no-store');
    expect(await cacheControl('{ webhooks { id } }')).toBe('private, no-store');
  });

  it('keeps nothing of an answer with errors, even of a document it keeps when it has none', async () => {
    const query = 'query ($id: ID!) { currencies { iso } customer(id: $id) { id } }';
    const customer = await factories(stack.emulator, key).customer();
    expect(await cacheControl(query, { id: String(customer.id) })).toBe('private, max-age=30');

    // An id the gateway refuses: the customer is null with an error, the currencies are there.
    const refused = await answer(query, { id: '0' });
    expect(refused.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(refused.cacheControl).toBe('private, no-store');
  });

  it('keeps nothing of a mutation', async () => {
    expect(await cacheControl('mutation { createCustomer(input: { firstname: "A", lastname: "B", email: "hints@example.com" }) { customer { id } } }')).toBe('private, no-store');
  });
});
