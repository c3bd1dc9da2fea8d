/**
 * Every priced answer tells its caller what it cost, as Shopify's do: the
 * estimate the limit was checked against, the upstream calls the operation
 * really made, and the limit. COST_EXTENSIONS=false turns it off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startGatewayOver, startStack, type GatewayOnly, type Stack } from '../support/harness.js';

interface CostExtension {
  requestedQueryCost: number;
  actualQueryCost: number;
  maximumAvailable: number;
}
const costOf = (res: object) => (res as { extensions?: { cost?: CostExtension } }).extensions?.cost;

describe('extensions.cost', () => {
  let stack: Stack;
  let quiet: GatewayOnly;
  const key = newKey('cost-ext');

  beforeAll(async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '100', RATE_LIMIT_PER_MINUTE: '0' } });
    quiet = await startGatewayOver(stack.emulator.url, { COST_EXTENSIONS: 'false', RATE_LIMIT_PER_MINUTE: '0' });
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    for (let i = 0; i < 3; i++) await make.transaction({ customer_id: customer.id });
  });
  afterAll(async () => {
    await quiet.stop();
    await stack.stop();
  });

  it('carries the estimate, the upstream calls made and the limit', async () => {
    await stack.resetCounts();
    const res = await stack.gql('{ transactions(first: 5) { nodes { id customer { email } } } }', {}, key);
    expect(res.errors).toBeUndefined();
    const made = await stack.upstreamCalls();
    expect(made).toBeGreaterThan(0);
    // 1 for the connection, 5 x (1 for the transaction + 1 for its customer).
    expect(costOf(res)).toEqual({ requestedQueryCost: 11, actualQueryCost: made, maximumAvailable: 100 });
  });

  it('counts no upstream call for a refused operation, and says what it would have cost', async () => {
    await stack.resetCounts();
    const res = await stack.gql('{ transactions(first: 60) { nodes { id customer { email } } } }', {}, key);
    expect(res.errors?.[0]?.extensions?.code).toBe('OPERATION_TOO_COSTLY');
    expect(costOf(res)).toEqual({ requestedQueryCost: 121, actualQueryCost: 0, maximumAvailable: 100 });
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('is left out with COST_EXTENSIONS=false', async () => {
    const res = await quiet.gql('{ transactions(first: 5) { nodes { id } } }', {}, key);
    expect(res.errors).toBeUndefined();
    expect(res).not.toHaveProperty('extensions.cost');
  });
});
