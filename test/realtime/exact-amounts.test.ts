/**
 * Amounts on the real-time path are as exact as on the HTTP path: a signed
 * webhook whose amounts no JS number holds reaches a subscriber with every
 * digit, over the in-memory bus and over the Redis bus between two
 * instances; an ordinary amount still reads as before. Gateway and emulator
 * run as servers; the webhooks are posted by the test, signed like the
 * upstream signs, with the amounts written into the body as number tokens.
 * A reconciler's re-read keeps its exact amounts over the Redis channel too
 * (over the in-memory bus: reconciler.test.ts).
 */
import { singleServer } from '../../src/redis-target.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { PaymentEvent } from '../../src/realtime/events.js';
import { RedisLinks } from '../../src/redis.js';
import { redisEventLog } from '../../src/realtime/redis-log.js';
import { soleLease } from '../../src/realtime/poll-lease.js';
import { createReconciler } from '../../src/realtime/reconciler.js';
import { Decimal } from '../../src/upstream/decimal.js';
import { transactionModel } from '../../src/upstream/models.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { disposeLive, eventually, postWebhook, startRealtimeStack, subscribeLive, transactionEvent, wsClient, type RealtimeStack } from './support.js';

interface TransactionUpdated {
  transactionUpdated: { id: string; status: string; amount: number; amountMoney: { amount: string; currencyIso: string } | null; feesMoney: { amount: string } | null };
}
interface PaymentEventData {
  paymentEvent: {
    type: string;
    entity: { amountMoney: { amount: string } | null; feesMoney: { amount: string } | null } | null;
    rawEntity: Record<string, unknown> | null;
  };
}
const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status amount amountMoney { amount currencyIso } feesMoney { amount } } }`;
const PAYMENT_EVENT = `subscription { paymentEvent { type entity { ... on Transaction { amountMoney { amount } feesMoney { amount } } } rawEntity } }`;

// Amounts no JS number holds: 17 significant digits before the point, and the double nearest 0.1, written out.
const BIG = '12345678901234567.89';
const TINY = '0.1000000000000000055511151231257827';

/** A pending transaction of a fresh account, and a signed-webhook body maker for later states of it. */
async function pendingTransaction(stack: RealtimeStack) {
  const key = newKey('exact');
  const f = factories(stack.emulator, key);
  const transaction = await f.transaction();
  const accounts = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
  const accountId = (accounts['v1/accounts'] ?? (accounts as unknown as { id: number }[]))[0]!.id;
  let later = Date.now();
  /** The transaction approved, one second later each time, with `amount` and `fees` written as these tokens. */
  const approved = (amount: string, fees: string, extra: Record<string, unknown> = {}) => {
    later += 1000;
    return transactionEvent({
      accountId,
      transaction: { ...transaction, status: 'approved', amount: 'AMOUNT', fees: 'FEES', updated_at: new Date(later).toISOString(), ...extra },
    })
      .replace('"AMOUNT"', amount)
      .replace('"FEES"', fees);
  };
  return { key, transaction, approved };
}

describe('exact amounts over the in-memory bus', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ forward: false });
  });
  afterAll(() => stack.stop());

  it('brings a webhook amount no JS number holds to a transactionUpdated subscriber with every digit', async () => {
    const { key, transaction, approved } = await pendingTransaction(stack);
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    expect((await sub.nth(1)).transactionUpdated.amountMoney).toEqual({ amount: '1000', currencyIso: 'XOF' });

    expect((await postWebhook(stack.gateway.port, approved(BIG, TINY), { secret: stack.secret })).status).toBe(200);
    const { transactionUpdated } = await sub.nth(2);
    expect(transactionUpdated).toMatchObject({ status: 'APPROVED', amountMoney: { amount: BIG, currencyIso: 'XOF' }, feesMoney: { amount: TINY } });
    // The deprecated Float twin is the nearest double, as it always was.
    expect(transactionUpdated.amount).toBe(Number(BIG));
    await disposeLive(stack.wsUrl, client);
  });

  it('still reads an ordinary amount, exact as a double, as before', async () => {
    const { key, transaction, approved } = await pendingTransaction(stack);
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    await sub.nth(1);
    await postWebhook(stack.gateway.port, approved('2500', '12.5'), { secret: stack.secret });
    expect((await sub.nth(2)).transactionUpdated).toMatchObject({ status: 'APPROVED', amount: 2500, amountMoney: { amount: '2500' }, feesMoney: { amount: '12.5' } });
    await disposeLive(stack.wsUrl, client);
  });

  it("types a paymentEvent's entity with every digit, and keeps rawEntity's amounts JSON numbers, as the events query has them", async () => {
    const { key, approved } = await pendingTransaction(stack);
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<PaymentEventData>(stack.wsUrl, client, PAYMENT_EVENT);
    await postWebhook(stack.gateway.port, approved(BIG, TINY), { secret: stack.secret });
    const { paymentEvent } = await sub.nth(1);
    expect(paymentEvent.entity).toEqual({ amountMoney: { amount: BIG }, feesMoney: { amount: TINY } });
    expect(paymentEvent.rawEntity).toMatchObject({ status: 'approved', amount: Number(BIG), fees: Number(TINY) });
    await disposeLive(stack.wsUrl, client);
  });
});

describeWith('redis-server', 'exact amounts over the Redis bus, between two instances', () => {
  let redis: RedisServer;
  let a: RealtimeStack;
  let b: RealtimeStack;
  beforeAll(async () => {
    redis = await startRedisServer();
    a = await startRealtimeStack({ forward: false, env: { REDIS_URL: redis.url } });
    b = await startRealtimeStack({ forward: false, env: { REDIS_URL: redis.url }, sharedEmulator: a.emulator });
  });
  afterAll(async () => {
    // b shares a's emulator: a stops it, last.
    await b?.stop();
    await a?.stop();
    await redis?.stop();
  });

  it.each([
    { case: 'an amount no JS number holds', amount: BIG, fees: TINY, expected: { amountMoney: { amount: BIG, currencyIso: 'XOF' }, feesMoney: { amount: TINY } } },
    { case: 'an ordinary amount', amount: '2500', fees: '12.5', expected: { amount: 2500, amountMoney: { amount: '2500', currencyIso: 'XOF' }, feesMoney: { amount: '12.5' } } },
  ])('brings $case, posted to one instance, to a subscriber on the other with every digit', async ({ amount, fees, expected }) => {
    const { key, transaction, approved } = await pendingTransaction(a);
    const { client, connected } = wsClient(b.wsUrl, key);
    await connected;
    const sub = await subscribeLive<TransactionUpdated>(b.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    await sub.nth(1);
    expect((await postWebhook(a.gateway.port, approved(amount, fees), { secret: a.secret })).status).toBe(200);
    expect((await sub.nth(2)).transactionUpdated).toMatchObject({ status: 'APPROVED', ...expected });
    await disposeLive(b.wsUrl, client);
  });

  it("brings custom metadata that looks like the codec's Decimal tag to the other instance as it was", async () => {
    const { key, transaction, approved } = await pendingTransaction(a);
    const { client, connected } = wsClient(b.wsUrl, key);
    await connected;
    const sub = await subscribeLive<{ transactionUpdated: { status: string; customMetadata: unknown } }>(
      b.wsUrl,
      client,
      `subscription ($id: ID) { transactionUpdated(id: $id) { status customMetadata } }`,
      { id: String(transaction.id) },
    );
    await sub.nth(1);
    const customMetadata = { price: { $decimal: '12' }, note: { $decimal: 'not a number' } };
    await postWebhook(a.gateway.port, approved(BIG, '1', { custom_metadata: customMetadata }), { secret: a.secret });
    expect((await sub.nth(2)).transactionUpdated).toEqual({ status: 'APPROVED', customMetadata });
    await disposeLive(b.wsUrl, client);
  });

  it("carries a reconciler's re-read amount through the event log to another instance as the Decimal the decoder made", async () => {
    const logger = createLogger('silent');
    const prefix = `exact-amounts-${Date.now()}:`;
    const open = () => redisEventLog({ target: singleServer(redis.url), prefix, logger, links: new RedisLinks(logger), maxEvents: 1000 });
    const [here, there] = await Promise.all([open(), open()]);
    const amount = Decimal.fromJsonNumber(BIG);
    const reconciler = createReconciler({
      settings: { initialMs: 20, maxMs: 20, jitter: 0, readsPerSecond: 1000 },
      bus: here,
      log: here,
      lease: soleLease,
      logger,
      read: async (_key, _kind, id) => ({ id, status: 'approved', updated_at: new Date().toISOString(), amount, fees: Decimal.fromJsonNumber(TINY) }),
    });
    const published: PaymentEvent[] = [];
    there.subscribe(7, (e) => published.push(e));
    try {
      const release = reconciler.watch({ accountId: 7, kind: 'transaction', id: 1, apiKey: 'sk_sandbox_a', isFinal: (status) => status === 'approved' });
      const [event] = await eventually(async () => published, (p) => p.length > 0);
      release();
      expect(event!.origin).toBe('snapshot');
      expect(event!.entity!.amount).toBeInstanceOf(Decimal);
      const parsed = transactionModel.parse(event!.entity);
      expect([String(parsed.amount), String(parsed.fees)]).toEqual([BIG, TINY]);
    } finally {
      await reconciler.close();
      await Promise.all([here.close(), there.close()]);
    }
  });
});
