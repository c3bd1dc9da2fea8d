/**
 * The payment rules as a caller sees them through the gateway: each test
 * here guards one rule of src/payments/rules.ts (or its use by a resolver)
 * that no other suite would notice breaking.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('payment rules through the gateway', () => {
  let stack: Stack;
  const key = newKey('rules');

  beforeAll(async () => {
    stack = await startStack({ emulator: { settleMs: 30 } });
  });
  afterAll(() => stack.stop());

  it.each(['transactions', 'payouts'])('%s(filter: { status: UNKNOWN }) is BAD_USER_INPUT with no upstream call', async (field) => {
    await stack.resetCounts();
    const res = await stack.gql(`{ ${field}(filter: { status: UNKNOWN }) { nodes { id } } }`, {}, key);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.status' });
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('isPaid is true for approved, refunded, transferred and partial refunds, false otherwise', async () => {
    const f = factories(stack.emulator, key);
    const statuses = ['pending', 'approved', 'declined', 'canceled', 'refunded', 'transferred', 'approved_partially_refunded', 'transferred_partially_refunded'];
    const ids: Record<string, string> = {};
    for (const status of statuses) {
      const t = await f.transaction();
      await stack.admin('POST', `/_emulator/transactions/${t.id}/status`, { status });
      ids[status] = String(t.id);
    }
    const query = statuses.map((s) => `${s}: transaction(id: "${ids[s]}") { status isPaid }`).join(' ');
    const res = await stack.gql<Record<string, { status: string; isPaid: boolean }>>(`{ ${query} }`, {}, key);
    expect(res.errors).toBeUndefined();
    const paid = Object.fromEntries(statuses.map((s) => [s, res.data![s]!.isPaid]));
    expect(paid).toEqual({
      pending: false,
      approved: true,
      declined: false,
      canceled: false,
      refunded: true,
      transferred: true,
      approved_partially_refunded: true,
      transferred_partially_refunded: true,
    });
  });

  it('a status the gateway does not know reads as UNKNOWN, and the rest of the answer arrives', async () => {
    const t = await factories(stack.emulator, key).transaction();
    await stack.admin('POST', `/_emulator/transactions/${t.id}/status`, { status: 'on_hold' });
    const res = await stack.gql<{ transaction: { id: string; status: string; isPaid: boolean } }>(
      `query ($id: ID!) { transaction(id: $id) { id status isPaid } }`,
      { id: String(t.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.transaction).toEqual({ id: String(t.id), status: 'UNKNOWN', isPaid: false });
  });

  it('after updateTransaction, a later read of the same transaction in the operation sees the update', async () => {
    const t = await factories(stack.emulator, key).transaction({ description: 'Before' });
    const res = await stack.gql<Record<string, { transaction: { description: string } }>>(
      `mutation ($id: ID!) {
         before: createTransactionToken(id: $id) { transaction { description } }
         update: updateTransaction(id: $id, input: { description: "After" }) { transaction { description } }
         after: createTransactionToken(id: $id) { transaction { description } }
       }`,
      { id: String(t.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.before!.transaction.description).toBe('Before');
    expect(res.data!.update!.transaction.description).toBe('After');
    expect(res.data!.after!.transaction.description).toBe('After');
  });
});
