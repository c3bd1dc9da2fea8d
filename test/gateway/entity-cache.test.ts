/**
 * The entity cache across requests, counted at the emulator: warm reads cost
 * no upstream call, non-final objects are kept only under webhook control, one key never
 * reads another's entries, `Cache-Control: no-cache` bypasses, and signed
 * webhooks and the gateway's own mutations evict.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withoutCost } from '../support/answers.js';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { postWebhook } from '../realtime/support.js';
import { accountIdOf, objectEvent } from './cache-support.js';

const SECRET = 'whsec_entity_cache_tests';
const PAGE = '{ transactions(first: 50) { nodes { id customer { email } currency { iso } } } }';
const ONE = 'query ($id: ID!) { transaction(id: $id) { id status description amountMoney { amount } customer { email } currency { iso } } }';

interface One {
  transaction: { id: string; status: string; description: string | null; amountMoney: { amount: string }; customer: { email: string } | null; currency: { iso: string } } | null;
}

describe('entity cache in memory, across requests', () => {
  let stack: Stack;
  const key = newKey('cache');
  let make: ReturnType<typeof factories>;
  let customers: RestObject[];
  let final: RestObject;
  let pending: RestObject;

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOK_SECRETS: SECRET } });
    make = factories(stack.emulator, key);
    customers = [];
    for (let i = 0; i < 10; i++) customers.push(await make.customer());
    for (let i = 0; i < 48; i++) await make.transaction({ amount: 100 + i, customer: { id: customers[i % 10]!.id } });
    pending = await make.transaction({ amount: 700, customer: { id: customers[0]!.id } });
    final = await make.transaction({ amount: 1234, customer: { id: customers[1]!.id } });
    await make.rest('PUT', `/v1/transactions/${final.id}`, { status: 'canceled' });
  });
  beforeEach(() => stack.resetCounts());
  afterAll(() => stack.stop());

  const read = (id: number, k = key, headers: Record<string, string> = {}) =>
    fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${k}`, ...headers },
      body: JSON.stringify({ query: ONE, variables: { id: String(id) } }),
    }).then((r) => r.json() as Promise<{ data?: One; errors?: unknown[]; extensions?: { cost?: { actualQueryCost: number } } }>);

  it('answers the 50-item page with customer and currency from one upstream call once warm', async () => {
    const cold = await stack.gql<{ transactions: { nodes: { customer: { email: string } }[] } }>(PAGE, {}, key);
    expect(cold.errors).toBeUndefined();
    expect(cold.data!.transactions.nodes).toHaveLength(50);
    expect(await stack.upstreamCalls()).toBe(12);

    await stack.resetCounts();
    const warm = await stack.gql(PAGE, {}, key);
    expect(warm.data).toEqual(cold.data);
    expect(await stack.upstreamCalls()).toBe(1);
  });

  it('answers transaction(id) { customer currency } on a final transaction with no upstream call once warm', async () => {
    const first = await read(final.id);
    expect(first.data!.transaction).toMatchObject({ status: 'CANCELED', amountMoney: { amount: '1234' }, currency: { iso: 'XOF' } });
    await stack.resetCounts();
    const again = await read(final.id);
    // The same answer, but for what it cost: extensions.cost counts the upstream calls made, none now.
    expect(withoutCost(again)).toEqual(withoutCost(first));
    expect(again.extensions?.cost?.actualQueryCost).toBe(0);
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('keeps a transaction that is not final while webhooks can announce its change (test/gateway/pending-polls.test.ts)', async () => {
    await read(pending.id);
    await read(pending.id);
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(1);
  });

  it("never serves one key's cached transaction to another key", async () => {
    await read(final.id);
    await stack.resetCounts();
    const other = await read(final.id, newKey('other'));
    // The other key's account has no such transaction: the upstream says so, not the cache.
    expect(other.data!.transaction).toBeNull();
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(1);
  });

  it('reads the upstream when the request says Cache-Control: no-cache', async () => {
    await read(final.id);
    await stack.resetCounts();
    await read(final.id, key, { 'cache-control': 'no-cache' });
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(1);
  });

  it('tells HTTP caches a cached answer is private, kept for the shortest TTL of its types (customer and currency: 60 s)', async () => {
    await read(final.id);
    const res = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: ONE, variables: { id: String(final.id) } }),
    });
    expect(((await res.json()) as { data?: One }).data?.transaction?.id).toBe(String(final.id));
    expect(res.headers.get('cache-control')).toBe('private, max-age=60');
  });

  it('evicts an object named by a signed webhook before acknowledging it', async () => {
    const customer = customers[1]!;
    expect((await read(final.id)).data!.transaction!.customer!.email).toBe(customer.email);
    const changed = await make.rest('PUT', `/v1/customers/${customer.id}`, { email: `changed.${customer.id}@example.com` });
    // Still the cached copy: the upstream's change is not known yet.
    expect((await read(final.id)).data!.transaction!.customer!.email).toBe(customer.email);
    const entity = ((changed as Record<string, unknown>)['v1/customer'] ?? changed) as RestObject;
    const webhook = await postWebhook(stack.gateway.port, objectEvent('customer', await accountIdOf(make), entity), { secret: SECRET });
    expect(webhook.status).toBe(200);
    expect((await read(final.id)).data!.transaction!.customer!.email).toBe(`changed.${customer.id}@example.com`);
  });

  it('evicts what a mutation through the gateway changed', async () => {
    await read(final.id);
    const update = await stack.gql<{ updateTransaction: { userErrors: unknown[] } }>(
      'mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "changed here" }) { userErrors { message } } }',
      { id: String(final.id) },
      key,
    );
    expect(update.data!.updateTransaction.userErrors).toEqual([]);
    expect((await read(final.id)).data!.transaction!.description).toBe('changed here');
  });
});
