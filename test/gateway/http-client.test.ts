/**
 * UPSTREAM_HTTP_CLIENT=node beside the default got: two gateways over one
 * emulator, the same operations, the same answers and the same upstream
 * calls (counted at the emulator, so the entity cache is off). The transport
 * contract itself is tested in test/upstream/ against both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startGatewayOver, startStack, type GatewayOnly, type Stack } from '../support/harness.js';

const NO_CACHE = { ENTITY_CACHE: 'false', CURRENCY_CACHE_TTL_MS: '0' };

describe('UPSTREAM_HTTP_CLIENT=node answers as got does, with the same upstream calls', () => {
  let stack: Stack;
  let node: GatewayOnly;
  const key = newKey('httpclient');

  beforeAll(async () => {
    stack = await startStack({ env: NO_CACHE });
    node = await startGatewayOver(stack.emulator.url, { ...NO_CACHE, UPSTREAM_HTTP_CLIENT: 'node' });
    const make = factories(stack.emulator, key);
    const customers = [];
    for (let i = 0; i < 10; i++) customers.push(await make.customer());
    for (let i = 0; i < 30; i++) await make.payout({ amount: 100 + i, customer: { id: customers[i % 10]!.id } });
  });
  afterAll(async () => {
    await node?.stop();
    await stack?.stop();
  });

  it('runs got by default and node when asked', () => {
    expect(stack.upstream.httpClient).toBe('got');
    expect(node.upstream.httpClient).toBe('node');
  });

  /** One operation through a gateway: its answer, and the emulator's count of calls per route. */
  async function run(gateway: Pick<GatewayOnly, 'gql'>, query: string, variables: Record<string, unknown> = {}) {
    await stack.resetCounts();
    const answer = await gateway.gql(query, variables, key);
    const stats = (await stack.admin('GET', '/_emulator/stats')) as { total: number; routes: Record<string, number> };
    return { answer, calls: stats };
  }

  it('reads a page of payouts with their customers and currency: same answer, same 12 calls', async () => {
    const query = '{ payouts(first: 30) { totalCount nodes { id amountMoney { amount currencyIso } status customer { id fullName email } currency { iso } } } }';

    const viaGot = await run(stack, query);
    const viaNode = await run(node, query);

    expect(viaGot.answer.errors).toBeUndefined();
    expect((viaGot.answer.data as { payouts: { nodes: unknown[] } }).payouts.nodes).toHaveLength(30);
    expect(viaNode.answer).toEqual(viaGot.answer);
    // 1 search, 10 distinct customers, 1 currency by id.
    expect(viaGot.calls.total).toBe(12);
    expect(viaNode.calls).toEqual(viaGot.calls);
  });

  it('writes through node with the amount as sent and reads it back alike', async () => {
    const create = await node.gql<{ createPayout: { payout: { id: string; amountMoney: { amount: string } }; userErrors: unknown[] } }>(
      'mutation { createPayout(input: { amountDecimal: "2500", currency: { iso: "XOF" }, mode: "mtn", customer: { firstname: "Ama", lastname: "Node", email: "ama.node@example.com" } }) { payout { id amountMoney { amount } } userErrors { field message code } } }',
      {},
      key,
    );
    expect(create.errors).toBeUndefined();
    expect(create.data!.createPayout.userErrors).toEqual([]);
    expect(create.data!.createPayout.payout.amountMoney.amount).toBe('2500');

    const query = 'query ($id: ID!) { payout(id: $id) { id amountMoney { amount } customer { fullName } } }';
    const variables = { id: create.data!.createPayout.payout.id };
    const viaGot = await run(stack, query, variables);
    const viaNode = await run(node, query, variables);
    expect(viaNode.answer).toEqual(viaGot.answer);
    expect(viaNode.calls).toEqual(viaGot.calls);
  });
});
