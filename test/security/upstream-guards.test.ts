/**
 * The gateway must not become a weapon against the merchant's own upstream
 * account: a key the upstream refuses costs it almost nothing, and one
 * operation makes a bounded number of upstream calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('a key the upstream rejects', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('costs one upstream call for a whole aliased operation, then none for the next while remembered', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: '*', status: 401, body: { message: 'Invalid API key' } });
    const key = newKey('rejected');
    const query = `{ ${Array.from({ length: 30 }, (_, i) => `t${i}: transaction(id: "${i + 1}") { id }`).join(' ')} }`;
    await stack.resetCounts();
    const first = await stack.gql(query, {}, key);
    expect(first.errors?.every((e) => e.extensions?.code === 'UNAUTHENTICATED')).toBe(true);
    expect(await stack.upstreamCalls()).toBe(1);

    const again = await stack.gql(query, {}, key);
    expect(again.status).toBe(401);
    expect(again.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await stack.upstreamCalls()).toBe(1);
    await stack.admin('DELETE', '/_emulator/faults');
  });
});

describe('upstream calls per operation', () => {
  let stack: Stack;
  const key = newKey('budget');
  const ids: string[] = [];
  beforeAll(async () => {
    stack = await startStack({ env: { MAX_UPSTREAM_CALLS_PER_OPERATION: '4', RATE_LIMIT_PER_MINUTE: '0' } });
    const make = factories(stack.emulator, key);
    for (let i = 0; i < 5; i++) ids.push(String((await make.transaction()).id));
  });
  afterAll(() => stack.stop());

  const reads = (n: number) => `{ ${ids.slice(0, n).map((id, i) => `t${i}: transaction(id: "${id}") { id }`).join(' ')} }`;

  it('4 reads pass; the 5th field fails alone with UPSTREAM_BUDGET_EXCEEDED and is never sent', async () => {
    const four = await stack.gql<Record<string, { id: string }>>(reads(4), {}, key);
    expect(four.errors).toBeUndefined();
    await stack.resetCounts();
    const five = await stack.gql<Record<string, { id: string } | null>>(reads(5), {}, key);
    expect(five.errors).toHaveLength(1);
    expect(five.errors![0]!.extensions).toMatchObject({ code: 'UPSTREAM_BUDGET_EXCEEDED', limit: 4 });
    expect(Object.values(five.data!).filter((t) => t !== null)).toHaveLength(4);
    expect(await stack.upstreamCalls()).toBe(4);
  });

  it('a mutation that would outrun the budget is refused whole before any call, not stopped part way', async () => {
    const START = 'mutation ($p: [StartPayoutInput!]!) { startPayouts(payouts: $p) { userErrors { code } } }';
    const payouts = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(700_000 + i), phoneNumber: { number: '64000001', country: 'BJ' } }));
    // 1 + 3 payouts read first: within the 4 calls.
    const within = await stack.gql<{ startPayouts: { userErrors: { code: string }[] } }>(START, { p: payouts(3) }, key);
    expect(within.errors).toBeUndefined();
    expect(within.data!.startPayouts.userErrors.map((e) => e.code)).toEqual(['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND']);
    await stack.resetCounts();
    const over = await stack.gql(START, { p: payouts(4) }, key);
    expect(over.status).toBe(400);
    expect(over.errors?.[0]?.extensions).toMatchObject({ code: 'OPERATION_TOO_COSTLY', cost: 5, limit: 4 });
    expect(await stack.upstreamCalls()).toBe(0);
  });
});
