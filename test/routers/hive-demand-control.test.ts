/**
 * Hive Gateway's demand control, run for real in front of the gateway, and the
 * gateway's own estimate price a set of operations the same: both read the
 * @cost and @listSize of the SDL (docs/federation.md, "Cost"). The gateway's
 * price is the `extensions.cost.requestedQueryCost` of the same operation sent
 * to it directly; Hive's is its `extensions.cost.estimated`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { composeSupergraph } from '../federation/router.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { createHiveRuntime, PAYMENTS_SDL, PROPAGATE_AUTHORIZATION, type HiveRuntime } from './hive.js';

const PAYOUT = (id: number) => `{ id: "${id}", phoneNumber: { number: "64000001", country: "BJ" } }`;

/** Operations priced the same by both: connections with and without relations, edges, embedded objects, lists, unions, aliases, a mutation. */
const AGREED = [
  '{ transactions(first: 50) { nodes { id customer { email } currency { iso } } } }',
  '{ transactions(first: 30) { edges { cursor node { id amountMoney { amount } } } pageInfo { hasNextPage } totalCount } }',
  '{ payouts(first: 7) { nodes { customer { phoneNumber { number } } } } }',
  '{ events(first: 4) { nodes { id entity { ... on Transaction { customer { id } } } } } }',
  '{ transaction(id: "1") { id statusHistory { status } customer { email } } }',
  '{ a: customer(id: "1") { email } b: customer(id: "2") { email } }',
  '{ currencies { iso } }',
  '{ webhooks { id } }',
  'mutation { createCustomer(input: { firstname: "A", lastname: "B", email: "hive@example.com" }) { customer { id } userErrors { code } } }',
];

describeWith('hive-gateway', 'Hive Gateway demand control and the gateway price operations alike', () => {
  let stack: Stack;
  let hive: HiveRuntime;
  const key = newKey('hive');

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
    const supergraph = composeSupergraph([{ name: 'payments', url: stack.gateway.url, sdl: PAYMENTS_SDL }]);
    // The configuration of docs/routers.md: a list without @listSize is 10 items, no price per operation type.
    hive = await createHiveRuntime({
      supergraph,
      propagateHeaders: PROPAGATE_AUTHORIZATION,
      demandControl: { maxCost: 1000, listSize: 10, operationTypeCost: () => 0, includeExtensionMetadata: true },
    });
  });
  afterAll(async () => {
    await hive?.dispose();
    await stack?.stop();
  });

  const hivePrice = async (query: string) => {
    const res = await hive.fetch('http://hive.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as { extensions?: { cost?: { estimated?: number } } };
    return body.extensions?.cost?.estimated;
  };
  const ownPrice = async (query: string) => ((await stack.gql(query, {}, key)) as { extensions?: { cost?: { requestedQueryCost?: number } } }).extensions?.cost?.requestedQueryCost;

  it('gives every operation of the set the same price', async () => {
    const prices = [];
    for (const query of AGREED) prices.push({ query, hive: await hivePrice(query), gateway: await ownPrice(query) });
    for (const price of prices) expect(typeof price.gateway).toBe('number');
    expect(prices.map((p) => ({ query: p.query, price: p.hive }))).toEqual(prices.map((p) => ({ query: p.query, price: p.gateway })));
    // The 50-item page of the README.
    expect(prices[0]!.gateway).toBe(151);
  });

  it('differs where Hive reads less of the spec, as docs/routers.md says', async () => {
    // Hive prices a connection without `first` at one item; the gateway at DEFAULT_PAGE_SIZE (the SDL's assumedSize).
    const unsliced = '{ transactions { nodes { id } } }';
    expect({ hive: await hivePrice(unsliced), gateway: await ownPrice(unsliced) }).toEqual({ hive: 2, gateway: 21 });
    // Hive leaves input values unpriced; the gateway adds StartPayoutInput.id's @cost per payout given.
    const start = `mutation { startPayouts(payouts: [${[1, 2, 3].map(PAYOUT).join(', ')}]) { payouts { id } userErrors { code } } }`;
    expect({ hive: await hivePrice(start), gateway: await ownPrice(start) }).toEqual({ hive: 11, gateway: 14 });
  });
});
