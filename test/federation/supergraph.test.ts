import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { ORDERS_SDL, startOrdersSubgraph, type OrderRow, type RunningOrders } from './orders-subgraph.js';
import { composeSupergraph, startRecordingProxy, startRouter, type RecordingProxy, type RunningRouter } from './router.js';

const PAYMENTS_SDL = readFileSync(new URL('../../supergraph/payments.graphql', import.meta.url), 'utf8');

const ORDER_COUNT = 20;
const TRANSACTION_COUNT = 12;
const CUSTOMER_COUNT = 4;

interface GqlResponse<T> {
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

describe('payments subgraph inside a composed supergraph (@apollo/composition + @apollo/gateway)', () => {
  const key = newKey('supergraph');
  let stack: Stack;
  let payments: RecordingProxy;
  let orders: RunningOrders;
  let router: RunningRouter;
  let rows: OrderRow[];
  let transactions: RestObject[];
  let customers: RestObject[];

  async function query<T>(source: string, authorization: string | null = `Bearer ${key}`): Promise<GqlResponse<T>> {
    const res = await fetch(router.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ query: source }),
    });
    return (await res.json()) as GqlResponse<T>;
  }

  const entityRequests = () => payments.requests.filter((r) => r.query.includes('_entities'));

  beforeAll(async () => {
    // Each query here counts its own upstream reads: customers are not kept across requests.
    stack = await startStack({ env: { CUSTOMER_CACHE_TTL_MS: '0' } });
    const make = factories(stack.emulator, key);
    customers = [];
    for (let i = 0; i < CUSTOMER_COUNT; i++) customers.push(await make.customer());
    transactions = [];
    for (let i = 0; i < TRANSACTION_COUNT; i++) {
      transactions.push(await make.transaction({ amount: 1000 + i, customer: { id: customers[i % CUSTOMER_COUNT]!.id } }));
    }
    // Some orders share a transaction (split orders), so ids repeat across representations.
    rows = Array.from({ length: ORDER_COUNT }, (_, i) => {
      const t = transactions[i % TRANSACTION_COUNT]!;
      return { id: `ord_${i + 1}`, reference: `R-${i + 1}`, transactionId: String(t.id), customerId: String(t.customer_id) };
    });
    payments = await startRecordingProxy(stack.gateway.url);
    orders = await startOrdersSubgraph(rows);
    const supergraphSdl = composeSupergraph([
      { name: 'payments', url: payments.url, sdl: PAYMENTS_SDL },
      { name: 'orders', url: orders.url, sdl: ORDERS_SDL },
    ]);
    router = await startRouter(supergraphSdl);
  });

  afterAll(async () => {
    await router?.stop();
    await orders?.stop();
    await payments?.stop();
    await stack?.stop();
  });

  it('answers 20 orders with their transactions and customers in one _entities request to payments', async () => {
    payments.requests.length = 0;
    await stack.resetCounts();
    const res = await query<{ orders: { id: string; transaction: { status: string; amount: number; customer: { email: string } } }[] }>(
      '{ orders { id transaction { status amount customer { email } } } }',
    );

    expect(res.errors).toBeUndefined();
    const byId = new Map(transactions.map((t) => [String(t.id), t]));
    const emailOf = new Map(customers.map((c) => [c.id, c.email]));
    expect(res.data!.orders).toEqual(
      rows.map((row) => {
        const t = byId.get(row.transactionId)!;
        return { id: row.id, transaction: { status: 'PENDING', amount: t.amount, customer: { email: emailOf.get(t.customer_id as number) } } };
      }),
    );

    // What reached the payments subgraph: one batch carrying every order's reference, with the caller's key.
    expect(payments.requests).toHaveLength(1);
    expect(entityRequests()).toHaveLength(1);
    const [batch] = entityRequests();
    expect(batch!.representations).toHaveLength(ORDER_COUNT);
    expect(batch!.authorization).toBe(`Bearer ${key}`);

    // What reached the payments API: one read per distinct transaction and customer, nothing else.
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(TRANSACTION_COUNT);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(CUSTOMER_COUNT);
    expect(await stack.upstreamCalls()).toBe(TRANSACTION_COUNT + CUSTOMER_COUNT);
  });

  it('resolves a Customer referenced by orders, and the field orders adds to our Customer', async () => {
    payments.requests.length = 0;
    await stack.resetCounts();
    const fromOrders = await query<{ orders: { customer: { email: string; orderCount: number } }[] }>(
      '{ orders { customer { email orderCount } } }',
    );
    expect(fromOrders.errors).toBeUndefined();
    const emailOf = new Map(customers.map((c) => [String(c.id), c.email]));
    expect(fromOrders.data!.orders).toEqual(
      rows.map((row) => ({
        customer: { email: emailOf.get(row.customerId), orderCount: rows.filter((r) => r.customerId === row.customerId).length },
      })),
    );
    expect(entityRequests()).toHaveLength(1);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(CUSTOMER_COUNT);

    const fromPayments = await query<{ customer: { email: string; orderCount: number } }>(
      `{ customer(id: "${customers[0]!.id}") { email orderCount } }`,
    );
    expect(fromPayments.errors).toBeUndefined();
    expect(fromPayments.data!.customer).toEqual({
      email: customers[0]!.email,
      orderCount: rows.filter((r) => r.customerId === String(customers[0]!.id)).length,
    });
  });

  it('without the caller\'s Authorization, payments data is refused and the payments API is not called', async () => {
    payments.requests.length = 0;
    await stack.resetCounts();
    const res = await query<{ orders: { id: string; transaction: { status: string } | null }[] }>(
      '{ orders { id transaction { status } } }',
      null,
    );
    expect(entityRequests()).toHaveLength(1);
    expect(entityRequests()[0]!.authorization).toBeUndefined();
    expect(res.errors?.map((e) => e.extensions?.code)).toContain('UNAUTHENTICATED');
    expect(await stack.upstreamCalls()).toBe(0);
  });
});
