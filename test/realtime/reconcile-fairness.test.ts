/**
 * Reconciliation is fair between accounts: with webhooks lost and the
 * instance's re-reads at their cap, one tenant watching 200 pending
 * transactions does not hold back another tenant's one. Gateway and emulator
 * as servers; the emulator's status moved through its admin API.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { eventually, liveSubscriptions, setUpstreamStatus, startRealtimeStack, subscribe, subscribeLive, wsClient, type RealtimeStack } from './support.js';

interface TransactionUpdated {
  transactionUpdated: { id: string; status: string };
}
const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status } }`;
/** A fixed interval (no backoff, no jitter) and a cap that 200 objects overrun: a round of them takes 10 s. */
const INTERVAL_MS = 500;
const READS_PER_SECOND = 20;
const WATCHED_BY_A = 200;
/** One upstream read and the push to the subscriber, on a loaded CI machine. */
const SLACK_MS = 600;

let stack: RealtimeStack;
const clients: Client[] = [];
beforeAll(async () => {
  stack = await startRealtimeStack({
    forward: false,
    env: {
      RECONCILE_INITIAL_MS: String(INTERVAL_MS),
      RECONCILE_MAX_MS: String(INTERVAL_MS),
      RECONCILE_JITTER: '0',
      RECONCILE_READS_PER_SECOND: String(READS_PER_SECOND),
      WS_MAX_SUBSCRIPTIONS_PER_KEY: '1000',
      WS_SUBSCRIBE_PER_MINUTE: '10000',
      RATE_LIMIT_PER_MINUTE: '0',
    },
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await stack?.stop();
});

it("one tenant's 200 watched objects do not delay another tenant's update past about one interval", async () => {
  const keyA = newKey('many');
  const makeA = factories(stack.emulator, keyA);
  const ids: number[] = [];
  for (let i = 0; i < WATCHED_BY_A; i += 20) ids.push(...(await Promise.all(Array.from({ length: 20 }, async () => (await makeA.transaction()).id))));
  // Two connections: one holds at most 100 operations.
  for (const half of [ids.slice(0, WATCHED_BY_A / 2), ids.slice(WATCHED_BY_A / 2)]) {
    const a = wsClient(stack.wsUrl, keyA);
    clients.push(a.client);
    await a.connected;
    for (const id of half) subscribe(a.client, TRANSACTION_UPDATED, { id: String(id) });
  }
  await eventually(() => liveSubscriptions(stack.wsUrl), (n) => n === WATCHED_BY_A, 20_000);
  // All of A's objects are watched and their re-reads overrun the cap: they are being put off.
  const saturated = await eventually(() => stack.health(), (h) => h.reconcile.watched === WATCHED_BY_A && h.reconcile.deferred > WATCHED_BY_A / 2, 10_000);

  const keyB = newKey('one');
  const transaction = await factories(stack.emulator, keyB).transaction();
  const b = wsClient(stack.wsUrl, keyB);
  clients.push(b.client);
  await b.connected;
  const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, b.client, TRANSACTION_UPDATED, { id: String(transaction.id) });
  expect((await sub.nth(1)).transactionUpdated.status).toBe('PENDING');

  const approvedAt = Date.now();
  await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'approved');
  // One interval, then B's turn comes after at most one of A's objects per token; FIFO would put it behind ~200 of them (10 s).
  const bound = INTERVAL_MS + (3 * 1000) / READS_PER_SECOND + SLACK_MS;
  const approved = await sub.nth(2, bound + 10_000);
  const waited = Date.now() - approvedAt;

  expect(approved.transactionUpdated.status).toBe('APPROVED');
  expect(waited).toBeLessThan(bound);
  // The cap still holds for the instance as a whole.
  const { reconcile } = await stack.health();
  expect(reconcile.deferred).toBeGreaterThan(saturated.reconcile.deferred);
}, 60_000);
