/**
 * Hive Gateway, run for real over HTTP, in front of a supergraph of the
 * payments subgraph and a small `orders` subgraph: queries that need both
 * (docs/routers.md, "Hive Gateway"), counted at the payments subgraph (a
 * recording proxy) and at the payments API (the emulator's request log).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ORDERS_SDL, startOrdersSubgraph, type OrderRow, type RunningOrders } from '../federation/orders-subgraph.js';
import { composeSupergraph, startRecordingProxy, type RecordingProxy } from '../federation/router.js';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { PAYMENTS_SDL, PROPAGATE_AUTHORIZATION, startHiveServer, type HiveServer } from './hive.js';

const ORDER_COUNT = 20;
const TRANSACTION_COUNT = 12;
const CUSTOMER_COUNT = 4;

interface GqlResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describeWith('hive-gateway', 'Hive Gateway in front of payments and orders', () => {
  const key = newKey('hivesg');
  let stack: Stack;
  let payments: RecordingProxy;
  let orders: RunningOrders;
  let hive: HiveServer;
  let rows: OrderRow[];
  let transactions: RestObject[];
  let customers: RestObject[];

  const query = async <T>(source: string): Promise<GqlResponse<T>> => {
    const res = await fetch(hive.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: source }),
    });
    return (await res.json()) as GqlResponse<T>;
  };
  const entityRequests = () => payments.requests.filter((r) => r.query.includes('_entities'));

  beforeAll(async () => {
    // Each query counts its own upstream reads: customers are not kept across requests.
    stack = await startStack({ env: { CUSTOMER_CACHE_TTL_MS: '0', RATE_LIMIT_PER_MINUTE: '0' } });
    const make = factories(stack.emulator, key);
    customers = [];
    for (let i = 0; i < CUSTOMER_COUNT; i++) customers.push(await make.customer());
    transactions = [];
    for (let i = 0; i < TRANSACTION_COUNT; i++) {
      transactions.push(await make.transaction({ amount: 2000 + i, customer: { id: customers[i % CUSTOMER_COUNT]!.id } }));
    }
    // Split orders share a transaction, so ids repeat across representations.
    rows = Array.from({ length: ORDER_COUNT }, (_, i) => {
      const t = transactions[i % TRANSACTION_COUNT]!;
      return { id: `ord_${i + 1}`, reference: `R-${i + 1}`, transactionId: String(t.id), customerId: String(t.customer_id) };
    });
    payments = await startRecordingProxy(stack.gateway.url);
    orders = await startOrdersSubgraph(rows);
    hive = await startHiveServer();
    await hive.serve({
      supergraph: composeSupergraph([
        { name: 'payments', url: payments.url, sdl: PAYMENTS_SDL },
        { name: 'orders', url: orders.url, sdl: ORDERS_SDL },
      ]),
      propagateHeaders: PROPAGATE_AUTHORIZATION,
    });
  });
  afterAll(async () => {
    await hive?.stop();
    await orders?.stop();
    await payments?.stop();
    await stack?.stop();
  });

  it('answers orders with their transactions and customers from one _entities batch, one API read per distinct object', async () => {
    payments.requests.length = 0;
    await stack.resetCounts();
    const res = await query<{ orders: { id: string; reference: string; transaction: { id: string; status: string; amount: number; customer: { email: string } } }[] }>(
      '{ orders { id reference transaction { id status amount customer { email } } } }',
    );

    expect(res.errors).toBeUndefined();
    const byId = new Map(transactions.map((t) => [String(t.id), t]));
    const emailOf = new Map(customers.map((c) => [String(c.id), c.email]));
    expect(res.data!.orders).toEqual(
      rows.map((row) => {
        const t = byId.get(row.transactionId)!;
        return { id: row.id, reference: row.reference, transaction: { id: row.transactionId, status: 'PENDING', amount: t.amount, customer: { email: emailOf.get(row.customerId) } } };
      }),
    );

    // Payments sees one request from Hive, an _entities batch with the caller's key.
    expect(entityRequests()).toHaveLength(1);
    expect(payments.requests).toHaveLength(1);
    const representations = entityRequests()[0]!.representations as { __typename: string; id: string }[];
    // Hive sends each distinct transaction once (@apollo/gateway sends all 20, repeats included).
    expect(representations.map((r) => r.id).sort()).toEqual(transactions.map((t) => String(t.id)).sort());
    expect(entityRequests()[0]!.authorization).toBe(`Bearer ${key}`);
    // The loaders batch across the batch: one read per distinct transaction and customer, nothing else.
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(TRANSACTION_COUNT);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(CUSTOMER_COUNT);
    expect(await stack.upstreamCalls()).toBe(TRANSACTION_COUNT + CUSTOMER_COUNT);
  });

  it('adds orders\' orderCount to a customer read from payments, and payments\' email to customers referenced by orders', async () => {
    const first = customers[0]!;
    payments.requests.length = 0;
    await stack.resetCounts();
    const fromPayments = await query<{ customer: { id: string; email: string; orderCount: number } }>(`{ customer(id: "${first.id}") { id email orderCount } }`);
    expect(fromPayments.errors).toBeUndefined();
    expect(fromPayments.data!.customer).toEqual({ id: String(first.id), email: first.email, orderCount: rows.filter((r) => r.customerId === String(first.id)).length });
    expect(await stack.upstreamCalls()).toBe(1);

    payments.requests.length = 0;
    await stack.resetCounts();
    const fromOrders = await query<{ orders: { customer: { email: string; orderCount: number } }[] }>('{ orders { customer { email orderCount } } }');
    expect(fromOrders.errors).toBeUndefined();
    const emailOf = new Map(customers.map((c) => [String(c.id), c.email]));
    expect(fromOrders.data!.orders).toEqual(
      rows.map((row) => ({ customer: { email: emailOf.get(row.customerId), orderCount: rows.filter((r) => r.customerId === row.customerId).length } })),
    );
    expect(entityRequests()).toHaveLength(1);
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(CUSTOMER_COUNT);
    expect(await stack.upstreamCalls()).toBe(CUSTOMER_COUNT);
  });
});
