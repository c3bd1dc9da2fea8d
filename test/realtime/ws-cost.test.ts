/**
 * A query or mutation sent over GraphQL over WebSocket says what it cost, as
 * over HTTP (test/security/cost-extensions.test.ts): the estimate, the
 * upstream calls it made, the limit. A subscription's events carry no cost,
 * and COST_EXTENSIONS=false leaves it out. (SSE serves subscriptions only.)
 */
import type { FormattedExecutionResult } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { startRealtimeStack, wsClient, type RealtimeStack } from './support.js';

type Result = FormattedExecutionResult<Record<string, unknown>, { cost?: unknown }>;
const LIST = '{ transactions(first: 5) { nodes { id customer { email } } } }';

/** Every result of one operation, until it completes (or the first event, for a subscription). */
function run(client: Client, query: string, variables: Record<string, unknown> = {}, stopAfter = Infinity): Promise<Result[]> {
  return new Promise((resolve, reject) => {
    const results: Result[] = [];
    const dispose = client.subscribe<Record<string, unknown>, { cost?: unknown }>(
      { query, variables },
      {
        next: (result) => {
          results.push(result);
          if (results.length >= stopAfter) {
            dispose();
            resolve(results);
          }
        },
        error: reject,
        complete: () => resolve(results),
      },
    );
  });
}

const upstreamCalls = async (stack: RealtimeStack) => ((await (await fetch(`${stack.emulator.url}/_emulator/stats`)).json()) as { total: number }).total;

describe('extensions.cost over WebSocket', () => {
  let stack: RealtimeStack;
  let quiet: RealtimeStack;
  const key = newKey('ws-cost');
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { MAX_OPERATION_COST: '100' } });
    quiet = await startRealtimeStack({ env: { COST_EXTENSIONS: 'false' }, sharedEmulator: stack.emulator, forward: false });
    const make = factories(stack.emulator, key);
    const customer = await make.customer();
    for (let i = 0; i < 3; i++) await make.transaction({ customer_id: customer.id });
  });
  afterAll(async () => {
    await quiet?.stop();
    await stack?.stop();
  });

  it('is on a query answer, with the estimate, the upstream calls made and the limit, as over HTTP', async () => {
    const ws = wsClient(stack.wsUrl, key);
    await ws.connected;
    const before = await upstreamCalls(stack);
    const [answer] = await run(ws.client, LIST);
    const made = (await upstreamCalls(stack)) - before;
    expect(answer!.errors).toBeUndefined();
    expect(made).toBeGreaterThan(0);
    expect(answer!.extensions).toEqual({ cost: { requestedQueryCost: 11, actualQueryCost: made, maximumAvailable: 100 } });
    // The same document over HTTP is priced the same.
    const http = (await stack.gql(LIST, undefined, key)) as { extensions?: { cost?: { requestedQueryCost: number } } };
    expect(http.extensions?.cost?.requestedQueryCost).toBe(11);
    await ws.client.dispose();
  });

  it('is on a mutation answer, and not on a subscription event', async () => {
    const ws = wsClient(stack.wsUrl, key);
    await ws.connected;
    const [created] = await run(ws.client, 'mutation ($input: CreateCustomerInput!) { createCustomer(input: $input) { customer { id } userErrors { code } } }', {
      input: { firstname: 'Ada', lastname: 'Cost', email: `ada-${Date.now()}@example.com` },
    });
    expect(created!.errors).toBeUndefined();
    expect(created!.extensions?.cost).toMatchObject({ requestedQueryCost: expect.any(Number), actualQueryCost: expect.any(Number), maximumAvailable: 100 });
    const event = run(ws.client, 'subscription { paymentEvent { id type } }', {}, 1);
    await new Promise((r) => setTimeout(r, 200));
    await factories(stack.emulator, key).customer();
    const [first] = await event;
    expect(first!.data).toBeTruthy();
    expect(first!).not.toHaveProperty('extensions');
    await ws.client.dispose();
  });

  it('is left out with COST_EXTENSIONS=false', async () => {
    const ws = wsClient(quiet.wsUrl, key);
    await ws.connected;
    const [answer] = await run(ws.client, LIST);
    expect(answer!.errors).toBeUndefined();
    expect(answer!).not.toHaveProperty('extensions');
    await ws.client.dispose();
  });
});
