/**
 * Current state on subscribe, and reconciliation when webhooks do not come:
 * gateway and emulator as servers, the emulator's status moved through its
 * admin API as the payer's phone would, upstream reads counted by the
 * emulator. Waits are short through RECONCILE_* so each case takes seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { eventually, setUpstreamStatus, startRealtimeStack, subscribe, subscribeLive, wsClient, type RealtimeStack } from './support.js';

interface TransactionUpdated {
  transactionUpdated: { id: string; status: string; customer: { email: string } | null };
}
interface PayoutUpdated {
  payoutUpdated: { id: string; status: string };
}
const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status customer { email } } }`;
const PAYOUT_UPDATED = `subscription ($id: ID) { payoutUpdated(id: $id) { id status } }`;

/** The documented bound: a change is seen at most RECONCILE_MAX_MS after it happens, plus one upstream read. */
const RECONCILE = { RECONCILE_INITIAL_MS: '100', RECONCILE_MAX_MS: '400', RECONCILE_JITTER: '0.2' };
const BOUND_MS = 400;
/** One upstream read and the push to the subscriber, on a loaded CI machine. */
const SLACK_MS = 600;

async function pendingTransaction(stack: RealtimeStack) {
  const key = newKey('rec');
  const f = factories(stack.emulator, key);
  const customer = await f.customer();
  const transaction = await f.transaction({ customer: { id: customer.id } });
  const { client, connected } = wsClient(stack.wsUrl, key);
  await connected;
  return { key, customer, transaction, client };
}

describe.each([
  { webhooks: 'off', forward: false },
  { webhooks: 'on', forward: true },
])('a subscriber of a pending transaction, webhooks $webhooks', ({ forward }) => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ forward, env: RECONCILE });
  });
  afterAll(() => stack.stop());

  it('gets its current state at once, then APPROVED exactly once within the reconciliation bound after the upstream approves', async () => {
    const { transaction, customer, client } = await pendingTransaction(stack);
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    expect((await sub.nth(1)).transactionUpdated).toEqual({ id: String(transaction.id), status: 'PENDING', customer: { email: customer.email } });

    const approvedAt = Date.now();
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'approved');
    const approved = await sub.nth(2, BOUND_MS + SLACK_MS);
    expect(Date.now() - approvedAt).toBeLessThan(BOUND_MS + SLACK_MS);
    expect(approved.transactionUpdated).toMatchObject({ status: 'APPROVED', customer: { email: customer.email } });

    // The object stays watched (APPROVED is not final: it may be refunded); let two more re-reads pass.
    const { reconcile } = await stack.health();
    await eventually(() => stack.health(), (h) => h.reconcile.reads >= reconcile.reads + 2, 5000);
    expect(sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED']);
    await client.dispose();
  });

  it('gets APPROVED at once when it subscribes after the approval, and no second one', async () => {
    const { transaction, client } = await pendingTransaction(stack);
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'approved');
    const started = Date.now();
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    expect((await sub.nth(1, 2000)).transactionUpdated.status).toBe('APPROVED');
    // At once: before the first re-read would have been due.
    expect(Date.now() - started).toBeLessThan(2000);
    const { reconcile } = await stack.health();
    await eventually(() => stack.health(), (h) => h.reconcile.reads >= reconcile.reads + 2, 5000);
    expect(sub.values.map((v) => v.transactionUpdated.status)).toEqual(['APPROVED']);
    await client.dispose();
  });

  it('ends the subscription after a final state, and stops re-reading the object', async () => {
    const { transaction, client } = await pendingTransaction(stack);
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    await sub.nth(1);
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'declined');
    await sub.completed;
    expect(sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'DECLINED']);
    await eventually(() => stack.health(), (h) => h.reconcile.watched === 0 && h.subscriptions.subscriptions === 0);
    await client.dispose();
  });
});

describe('payoutUpdated', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ forward: false, env: RECONCILE });
  });
  afterAll(() => stack.stop());

  it('emits a payout already SENT at once and completes, reading nothing more', async () => {
    const key = newKey('payout');
    const f = factories(stack.emulator, key);
    const payout = await f.payout();
    await setUpstreamStatus(stack.emulator.url, 'payouts', payout.id, 'sent');
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const before = (await stack.health()).reconcile;
    const sub = subscribe<PayoutUpdated>(client, PAYOUT_UPDATED, { id: String(payout.id) });
    await sub.completed;
    expect(sub.values.map((v) => v.payoutUpdated.status)).toEqual(['SENT']);
    expect((await stack.health()).reconcile).toMatchObject({ watched: 0, reads: before.reads });
    await client.dispose();
  });

  it('follows a started payout to SENT with webhooks off', async () => {
    const key = newKey('payout2');
    const payout = await factories(stack.emulator, key).payout();
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<PayoutUpdated>(stack.wsUrl, client, PAYOUT_UPDATED, { id: String(payout.id) });
    await sub.nth(1);
    await setUpstreamStatus(stack.emulator.url, 'payouts', payout.id, 'started');
    await sub.nth(2, BOUND_MS + SLACK_MS);
    await setUpstreamStatus(stack.emulator.url, 'payouts', payout.id, 'sent');
    await sub.completed;
    expect(sub.values.map((v) => v.payoutUpdated.status)).toEqual(['PENDING', 'STARTED', 'SENT']);
    await client.dispose();
  });
});
