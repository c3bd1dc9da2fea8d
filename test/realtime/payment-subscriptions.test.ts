import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { eventually, postWebhook, sleep, startRealtimeStack, disposeLive, liveSubscriptions, subscribe, subscribeLive, transactionEvent, wsClient, type RealtimeStack } from './support.js';

interface TransactionUpdated {
  transactionUpdated: { id: string; status: string; amount: number; customer: { email: string } | null };
}
interface PayoutUpdated {
  payoutUpdated: { id: string; status: string };
}
interface PaymentEventData {
  paymentEvent: { id: string; type: string; objectId: string; accountId: string };
}

const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status amount customer { email } } }`;
const PAYOUT_UPDATED = `subscription ($id: ID) { payoutUpdated(id: $id) { id status } }`;
const PAYMENT_EVENT = `subscription ($types: [String!]) { paymentEvent(types: $types) { id type objectId accountId } }`;
const SEND = `mutation ($id: ID!) { sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }) { userErrors { code } } }`;

async function accountIdOf(stack: RealtimeStack, key: string): Promise<number> {
  const body = (await factories(stack.emulator, key).rest('GET', '/v1/accounts')) as Record<string, unknown>;
  const list = (body['v1/accounts'] ?? body) as { id: number }[];
  return list[0]!.id;
}

async function paidTransactionSetup(stack: RealtimeStack, key: string) {
  const f = factories(stack.emulator, key);
  const customer = await f.customer();
  const transaction = await f.transaction({ customer: { id: customer.id } });
  return { customer, transaction };
}

describe('subscriptions over graphql-ws', () => {
  let stack: RealtimeStack;
  const clients: { dispose(): unknown }[] = [];
  beforeAll(async () => {
    stack = await startRealtimeStack();
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await stack.stop();
  });
  const connect = (key: string | null) => {
    const c = wsClient(stack.wsUrl, key);
    clients.push(c.client);
    return c;
  };

  it('delivers the approved transaction, customer resolved, once the emulator settles a sendTransaction', async () => {
    const key = newKey('rt');
    const { customer, transaction } = await paidTransactionSetup(stack, key);
    const { client, connected } = connect(key);
    await connected;
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });

    const sent = await stack.gql<{ sendTransaction: { userErrors: unknown[] } }>(SEND, { id: String(transaction.id) }, key);
    expect(sent.data?.sendTransaction.userErrors).toEqual([]);

    const approved = await eventually(async () => sub.values, (v) => v.some((x) => x.transactionUpdated.status === 'APPROVED'));
    expect(approved.find((x) => x.transactionUpdated.status === 'APPROVED')!.transactionUpdated).toEqual({
      id: String(transaction.id),
      status: 'APPROVED',
      amount: 1000,
      customer: { email: customer.email },
    });
  });

  it('shows each account only its own events, with two accounts subscribed at once', async () => {
    const [keyA, keyB] = [newKey('iso_a'), newKey('iso_b')];
    const [a, b] = [connect(keyA), connect(keyB)];
    await Promise.all([a.connected, b.connected]);
    const subA = await subscribeLive<TransactionUpdated>(stack.wsUrl, a.client, TRANSACTION_UPDATED);
    const subB = await subscribeLive<TransactionUpdated>(stack.wsUrl, b.client, TRANSACTION_UPDATED);
    const eventsA = await subscribeLive<PaymentEventData>(stack.wsUrl, a.client, PAYMENT_EVENT);
    const eventsB = await subscribeLive<PaymentEventData>(stack.wsUrl, b.client, PAYMENT_EVENT);

    const txA = await factories(stack.emulator, keyA).transaction({ amount: 111 });
    const txB = await factories(stack.emulator, keyB).transaction({ amount: 222 });
    await Promise.all([subA.nth(1), subB.nth(1), eventsA.nth(1), eventsB.nth(1)]);
    await sleep(100); // room for a leak to show up

    expect(subA.values.map((v) => v.transactionUpdated.id)).toEqual([String(txA.id)]);
    expect(subB.values.map((v) => v.transactionUpdated.id)).toEqual([String(txB.id)]);
    const [accountA, accountB] = [await accountIdOf(stack, keyA), await accountIdOf(stack, keyB)];
    expect(new Set(eventsA.values.map((v) => v.paymentEvent.accountId))).toEqual(new Set([String(accountA)]));
    expect(new Set(eventsB.values.map((v) => v.paymentEvent.accountId))).toEqual(new Set([String(accountB)]));
  });

  it('filters paymentEvent by type', async () => {
    const key = newKey('types');
    const { client, connected } = connect(key);
    await connected;
    const sub = await subscribeLive<PaymentEventData>(stack.wsUrl, client, PAYMENT_EVENT, { types: ['transaction.created'] });
    const f = factories(stack.emulator, key);
    await f.customer();
    const tx = await f.transaction();
    await sub.nth(1);
    await sleep(100);
    expect(sub.values.map((v) => [v.paymentEvent.type, v.paymentEvent.objectId])).toEqual([['transaction.created', String(tx.id)]]);
  });

  it('keeps each kind to its own subscription: transactionUpdated gets no payout, payoutUpdated no transaction', async () => {
    const key = newKey('kinds');
    const { client, connected } = connect(key);
    await connected;
    const transactions = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED);
    const payouts = await subscribeLive<PayoutUpdated>(stack.wsUrl, client, PAYOUT_UPDATED);

    const f = factories(stack.emulator, key);
    const payout = await f.payout();
    const transaction = await f.transaction();
    await Promise.all([transactions.nth(1), payouts.nth(1)]);
    await sleep(100); // room for the other kind to leak in

    expect(transactions.values.map((v) => v.transactionUpdated.id)).toEqual([String(transaction.id)]);
    expect(payouts.values.map((v) => v.payoutUpdated)).toEqual([{ id: String(payout.id), status: 'PENDING' }]);
  });

  it('refuses to follow a payout the key cannot read with FORBIDDEN, naming the payout', async () => {
    const { client, connected } = connect(newKey('reader'));
    await connected;
    const sub = subscribe<PayoutUpdated>(client, PAYOUT_UPDATED, { id: '987654321' });
    const errors = (await sub.error) as { message?: string; extensions?: { code?: string } }[];
    expect(errors[0]).toMatchObject({
      message: 'Payout 987654321 does not exist or is not readable with this API key.',
      extensions: { code: 'FORBIDDEN' },
    });
  });

  it.each([
    { case: "another account's transaction", owner: 'other' },
    { case: 'a transaction that does not exist', owner: 'nobody' },
  ])('refuses to subscribe to $case with FORBIDDEN', async ({ owner }) => {
    const key = newKey('reader');
    const id = owner === 'other' ? (await factories(stack.emulator, newKey('owner')).transaction()).id : 987_654_321;
    const { client, connected } = connect(key);
    await connected;
    const sub = subscribe<TransactionUpdated>(client, TRANSACTION_UPDATED, { id: String(id) });
    const errors = (await sub.error) as { extensions?: { code?: string } }[];
    expect(errors[0]?.extensions?.code).toBe('FORBIDDEN');
    // The HTTP status a FORBIDDEN asks for has no place in a WebSocket error.
    expect(errors[0]?.extensions).not.toHaveProperty('http');
  });

  it.each([
    { case: 'no key', key: null, code: 4401 },
    { case: 'a malformed key', key: 'not-a-key', code: 4401 },
    { case: 'a key of the live environment', key: 'sk_live_abc', code: 4403 },
  ])('closes a connection with $case with $code', async ({ key, code }) => {
    const { closed } = connect(key);
    expect((await closed).code).toBe(code);
  });

  it('counts open connections in /healthz', async () => {
    const before = (await stack.health()).subscriptions.connections;
    const pair = [connect(newKey('h1')), connect(newKey('h2'))];
    await Promise.all(pair.map((p) => p.connected));
    expect((await stack.health()).subscriptions.connections).toBe(before + 2);
    await Promise.all(pair.map((p) => p.client.dispose()));
    await eventually(() => stack.health(), (h) => h.subscriptions.connections === before);
  });
});

describe('subscriptions fed by webhooks posted directly', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    // Relations are resolved from the upstream here (a slow customer read is injected): none from the entity cache.
    stack = await startRealtimeStack({ forward: false, env: { ENTITY_CACHE: 'false' } });
  });
  afterAll(() => stack.stop());

  async function subscribedTransaction() {
    const key = newKey('direct');
    const { transaction } = await paidTransactionSetup(stack, key);
    const accountId = await accountIdOf(stack, key);
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    const events = await subscribeLive<PaymentEventData>(stack.wsUrl, client, PAYMENT_EVENT);
    const snapshot = (status: string, updatedAt: Date, eventId?: number) =>
      transactionEvent({ accountId, eventId, transaction: { ...transaction, status, updated_at: updatedAt.toISOString() } });
    return { client, sub, events, snapshot };
  }

  it('publishes a duplicate delivery once', async () => {
    const { client, sub, snapshot } = await subscribedTransaction();
    const approved = snapshot('approved', new Date());
    for (let i = 0; i < 3; i += 1) expect((await postWebhook(stack.gateway.port, approved, { secret: stack.secret })).status).toBe(200);
    const later = snapshot('transferred', new Date(Date.now() + 1000));
    await postWebhook(stack.gateway.port, later, { secret: stack.secret });
    await sub.nth(3);
    await sleep(50);
    // The state at subscribe time comes first.
    expect(sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED', 'TRANSFERRED']);
    await disposeLive(stack.wsUrl, client);
  });

  it('never rolls a status back when an older snapshot arrives late, but still reports it as an event', async () => {
    const { client, sub, events, snapshot } = await subscribedTransaction();
    const t0 = Date.now();
    await postWebhook(stack.gateway.port, snapshot('approved', new Date(t0 + 2000)), { secret: stack.secret });
    await postWebhook(stack.gateway.port, snapshot('pending', new Date(t0)), { secret: stack.secret });
    await postWebhook(stack.gateway.port, snapshot('transferred', new Date(t0 + 4000)), { secret: stack.secret });
    await sub.nth(3);
    await events.nth(3);
    expect(sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED', 'TRANSFERRED']);
    expect(events.values.map((v) => v.paymentEvent.type)).toEqual(['transaction.approved', 'transaction.pending', 'transaction.transferred']);
    await disposeLive(stack.wsUrl, client);
  });

  it('acknowledges a webhook before resolving the subscribers’ relations', async () => {
    const { client, sub, snapshot } = await subscribedTransaction();
    // Reading the customer now takes 1.5 s upstream; the upstream must not wait for it.
    await stack.emulator.addFault({ route: 'GET /v1/customers/:id', latencyMs: 1500 });
    try {
      const started = Date.now();
      const res = await postWebhook(stack.gateway.port, snapshot('approved', new Date()), { secret: stack.secret });
      const ackMs = Date.now() - started;
      expect(res.status).toBe(200);
      expect(ackMs).toBeLessThan(500);
      const value = await sub.nth(2, 5000);
      expect(value.transactionUpdated.customer?.email).toEqual(expect.stringContaining('@'));
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    } finally {
      stack.emulator.clearFaults();
      await disposeLive(stack.wsUrl, client);
    }
  });
});

describe('a subscriber that stops reading', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ forward: false, env: { SUBSCRIPTION_QUEUE_LIMIT: '8', SUBSCRIPTION_MAX_BUFFERED_BYTES: '65536' } });
  });
  afterAll(() => stack.stop());

  it('is disconnected with 4429 once its queue is full, and stops counting as a connection', async () => {
    const key = newKey('slow');
    const accountId = await accountIdOf(stack, key);
    const ws = new WebSocket(stack.wsUrl, 'graphql-transport-ws');
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    const acked = new Promise<void>((resolve) => ws.once('message', () => resolve()));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
    await acked;
    const live = await liveSubscriptions(stack.wsUrl);
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { paymentEvent { id rawEntity } }' } }));
    await eventually(() => liveSubscriptions(stack.wsUrl), (n) => n > live);
    // Stop reading: the kernel buffers fill, then the gateway's sends stall.
    (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();

    const fat = 'x'.repeat(64 * 1024);
    let posted = 0;
    await eventually(
      async () => {
        posted += 1;
        const body = transactionEvent({ accountId, transaction: { id: 500_000 + posted, status: 'pending', amount: 1, metadata: { fat } } });
        await postWebhook(stack.gateway.port, body, { secret: stack.secret });
        return stack.health();
      },
      (h) => h.subscriptions.closedTooSlow === 1,
      10_000,
    );
    expect(posted).toBeLessThan(1000);

    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const close = await closed;
    expect(close.code).toBe(4429);
    expect(close.reason).toMatch(/too slow/i);
    await eventually(() => stack.health(), (h) => h.subscriptions.connections === 0);
  });
});
