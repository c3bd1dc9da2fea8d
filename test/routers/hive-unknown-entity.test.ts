/**
 * An order (another subgraph) that references a transaction payments does not
 * know, through each router: payments resolves the unknown id to null, as
 * docs/federation.md says, and what the caller then sees differs by router
 * (docs/routers.md, "An entity payments does not know").
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ORDERS_SDL, startOrdersSubgraph, type RunningOrders } from '../federation/orders-subgraph.js';
import { composeSupergraph, startRouter, type RunningRouter } from '../federation/router.js';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { PAYMENTS_SDL, PROPAGATE_AUTHORIZATION, startHiveServer, type HiveServer } from './hive.js';

interface Answer {
  data?: { orders: { id: string; transaction: { id: string; status: string } | null }[] } | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

describeWith('hive-gateway', 'an order referencing an unknown transaction, through Hive Gateway and @apollo/gateway', () => {
  const key = newKey('unknownref');
  let stack: Stack;
  let orders: RunningOrders;
  let hive: HiveServer;
  let unmasked: HiveServer;
  let apollo: RunningRouter;
  let knownId: string;

  const ask = async (url: string): Promise<Answer> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: '{ orders { id transaction { id status } } }' }),
    });
    return (await res.json()) as Answer;
  };

  beforeAll(async () => {
    stack = await startStack();
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    const known = await make.transaction({ amount: 2000, customer: { id: customer.id } });
    knownId = String(known.id);
    orders = await startOrdersSubgraph([
      { id: 'ord_known', reference: 'R-1', transactionId: knownId, customerId: String(customer.id) },
      { id: 'ord_unknown', reference: 'R-2', transactionId: '987654321', customerId: String(customer.id) },
    ]);
    const supergraph = composeSupergraph([
      { name: 'payments', url: stack.gateway.url, sdl: PAYMENTS_SDL },
      { name: 'orders', url: orders.url, sdl: ORDERS_SDL },
    ]);
    hive = await startHiveServer();
    await hive.serve({ supergraph, propagateHeaders: PROPAGATE_AUTHORIZATION });
    unmasked = await startHiveServer();
    await unmasked.serve({ supergraph, propagateHeaders: PROPAGATE_AUTHORIZATION, maskedErrors: false });
    apollo = await startRouter(supergraph);
  });
  afterAll(async () => {
    await hive?.stop();
    await unmasked?.stop();
    await apollo?.stop();
    await orders?.stop();
    await stack?.stop();
  });

  const DATA = () => ({
    orders: [
      { id: 'ord_known', transaction: { id: knownId, status: 'PENDING' } },
      { id: 'ord_unknown', transaction: null },
    ],
  });
  const AT_STATUS = ['orders', 1, 'transaction', 'status'];

  it('Hive Gateway: the data, the unknown transaction null, and a masked "Unexpected error." at its status', async () => {
    const answer = await ask(hive.url);
    expect(answer.data).toEqual(DATA());
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]).toMatchObject({ message: 'Unexpected error.', path: AT_STATUS, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });

  it('Hive Gateway with maskedErrors: false: the same error says what it is', async () => {
    const answer = await ask(unmasked.url);
    expect(answer.data).toEqual(DATA());
    expect(answer.errors?.map((e) => [e.message, e.path])).toEqual([['Cannot return null for non-nullable field Transaction.status.', AT_STATUS]]);
  });

  it('@apollo/gateway: the same data, no error, the check only in extensions.valueCompletion', async () => {
    const answer = (await ask(apollo.url)) as Answer & { extensions?: { valueCompletion?: { message: string; path: unknown[] }[] } };
    expect(answer.data).toEqual(DATA());
    expect(answer.errors).toBeUndefined();
    expect(answer.extensions?.valueCompletion?.map((e) => [e.message, e.path])).toEqual([['Cannot return null for non-nullable field Transaction.status.', AT_STATUS]]);
  });
});
