/**
 * The limits' defaults must never refuse what the project itself documents:
 * every example operation of the README and the explorer (the same texts,
 * checked by test/explorer/explorer.test.ts), the README's curl query, and the
 * operations the gateway bench measures, run here under the default limits
 * against the gateway and emulator as servers, answer without an error.
 */
import { readFileSync } from 'node:fs';
import { parse, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_OPERATIONS } from '../../bench/gateway.js';
import { EXAMPLE_OPERATIONS } from '../../src/explorer/examples.js';
import { eventually, liveSubscriptions, startRealtimeStack, subscribe, wsClient, type RealtimeStack } from '../realtime/support.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Every named operation of the explorer's example tabs, by name, with its whole document. */
function exampleOperations(): Map<string, { document: string; operation: OperationDefinitionNode }> {
  const found = new Map<string, { document: string; operation: OperationDefinitionNode }>();
  for (const { query } of EXAMPLE_OPERATIONS) {
    for (const definition of parse(query).definitions) {
      if (definition.kind === 'OperationDefinition' && definition.name) found.set(definition.name.value, { document: query, operation: definition });
    }
  }
  return found;
}

describe('documented operations under the default limits', () => {
  let stack: RealtimeStack;
  const key = newKey('documented');
  const examples = exampleOperations();

  const run = async (document: string, operationName?: string, variables?: Record<string, unknown>): Promise<Answer> => {
    const res = await fetch(stack.wsUrl.replace(/^ws/, 'http'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: document, operationName, variables }),
    });
    return (await res.json()) as Answer;
  };
  const runExample = (name: string, variables?: Record<string, unknown>) => {
    const example = examples.get(name);
    if (!example) throw new Error(`no example operation named ${name}`);
    return run(example.document, name, variables);
  };

  beforeAll(async () => {
    // The emulator forwards its webhooks to the gateway (for the subscription); every gateway limit keeps its default.
    stack = await startRealtimeStack();
    const make = factories(stack.emulator, key);
    for (let i = 0; i < 3; i++) await make.payout();
  });
  afterAll(() => stack?.stop());

  it('finds the examples it runs', () => {
    expect([...examples.keys()].sort()).toEqual(['Check', 'Pay', 'Payouts', 'Send', 'Updates']);
  });

  it('Payouts, Pay, Send, and Check once approved, with the Updates subscription delivering APPROVED', async () => {
    const payouts = await runExample('Payouts');
    expect(payouts.errors).toBeUndefined();

    const pay = await runExample('Pay');
    expect(pay.errors).toBeUndefined();
    const id = (pay.data!.createTransaction as { transaction: { id: string } }).transaction.id;

    const { client } = wsClient(stack.wsUrl, key);
    const before = await liveSubscriptions(stack.wsUrl);
    const updates = subscribe<{ transactionUpdated: { status: string } }>(client, examples.get('Updates')!.document, { id });
    await eventually(() => liveSubscriptions(stack.wsUrl), (n) => n > before, 5000);

    const send = await runExample('Send', { id });
    expect(send.errors).toBeUndefined();
    expect((send.data!.sendTransaction as { userErrors: unknown[] }).userErrors).toEqual([]);

    await eventually(async () => updates.values.map((v) => v.transactionUpdated.status), (s) => s.includes('APPROVED'), 5000);
    const check = await runExample('Check', { id });
    expect(check.errors).toBeUndefined();
    expect(check.data!.transaction).toMatchObject({ status: 'APPROVED', isPaid: true });
    await client.dispose();
  });

  it("the README's curl query", async () => {
    const curl = /-d '(\{"query":.*\})'/.exec(README)?.[1];
    expect(curl).toBeDefined();
    const { query } = JSON.parse(curl!) as { query: string };
    const answer = await run(query);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.payouts).toMatchObject({ totalCount: 3 });
  });

  it('the operations the gateway bench measures', async () => {
    const transactionId = String((await factories(stack.emulator, key).transaction()).id);
    for (const query of Object.values(BENCH_OPERATIONS)) {
      const answer = await run(query, undefined, query.includes('$id') ? { id: transactionId } : undefined);
      expect(answer.errors, query).toBeUndefined();
    }
  });
});
