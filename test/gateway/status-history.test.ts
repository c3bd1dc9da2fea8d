/**
 * `statusHistory`: rebuilt from the object's timestamps and its events, one
 * `GET /v1/events` per object batched across the operation, nothing when
 * not selected. Upstream calls are counted at the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

interface Entry {
  status: string;
  at: string | null;
  event: { id: string; type: string } | null;
}

describe('status history', () => {
  let stack: Stack;
  const key = newKey('history');
  const make = () => factories(stack.emulator, key);
  const move = (kind: 'transactions' | 'payouts', id: number, status: string) =>
    stack.admin('POST', `/_emulator/${kind}/${id}/status`, { status });

  beforeAll(async () => {
    stack = await startStack({ emulator: { settleMs: 60_000 } });
  });
  afterAll(() => stack.stop());

  const history = (id: number) =>
    stack.gql<{ transaction: { statusHistory: Entry[] } }>(
      'query ($id: ID!) { transaction(id: $id) { statusHistory { status at event { id type } } } }',
      { id: String(id) },
      key,
    );

  it('lists pending -> approved -> refunded with the events that recorded them, in order', async () => {
    const t = await make().transaction();
    await move('transactions', t.id, 'approved');
    await move('transactions', t.id, 'refunded');
    const res = await history(t.id);
    expect(res.errors).toBeUndefined();
    const entries = res.data!.transaction.statusHistory;
    expect(entries.map((e) => [e.status, e.event?.type])).toEqual([
      ['PENDING', 'transaction.created'],
      ['APPROVED', 'transaction.approved'],
      ['REFUNDED', 'transaction.refunded'],
    ]);
    const times = entries.map((e) => Date.parse(e.at!));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('costs the transaction read and one events read when selected, and no events read when not', async () => {
    const t = await make().transaction();
    await stack.resetCounts();
    await history(t.id);
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/events')).toBe(1);
    expect(await stack.upstreamCalls()).toBe(2);

    await stack.resetCounts();
    const plain = await stack.gql('query ($id: ID!) { transaction(id: $id) { id status approvedAt } }', { id: String(t.id) }, key);
    expect(plain.errors).toBeUndefined();
    expect(await stack.upstreamCalls('GET /v1/events')).toBe(0);
    expect(await stack.upstreamCalls()).toBe(1);
  });

  it('reads the events once per object of a list, and once per object however often it is selected', async () => {
    for (let i = 0; i < 3; i += 1) await make().transaction();
    await stack.resetCounts();
    const res = await stack.gql<{ transactions: { nodes: { a: Entry[]; b: Entry[] }[] } }>(
      'query { transactions(first: 3) { nodes { a: statusHistory { status } b: statusHistory { status } } } }',
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.transactions.nodes).toHaveLength(3);
    expect(await stack.upstreamCalls('GET /v1/events')).toBe(3);
  });

  it('builds a payout history from its events: pending -> started -> sent', async () => {
    const p = await make().payout({ mode: 'mtn' });
    await move('payouts', p.id, 'started');
    await move('payouts', p.id, 'sent');
    const res = await stack.gql<{ payout: { statusHistory: Entry[] } }>(
      'query ($id: ID!) { payout(id: $id) { statusHistory { status at event { type } } } }',
      { id: String(p.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.payout.statusHistory.map((e) => [e.status, e.event?.type])).toEqual([
      ['PENDING', 'payout.created'],
      ['STARTED', 'payout.started'],
      ['SENT', 'payout.sent'],
    ]);
  });
});
