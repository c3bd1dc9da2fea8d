/**
 * A delivery the gateway could not finish is answered 503 and leaves nothing
 * behind that would make its redelivery a duplicate or a stale state: a
 * failed eviction and a failed hand-over to the subscribers are both taken
 * again, whole, when the upstream redelivers. Real HTTP into the webhook
 * route, over the memory ledger and the Redis one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookReceiver } from '../../src/http/webhook-route.js';
import { memoryBus, type MemoryBus } from '../../src/realtime/bus.js';
import type { PaymentEvent } from '../../src/realtime/events.js';
import { memoryLedger, redisLedger, type DeliveryLedger } from '../../src/realtime/ledger.js';
import { ledgerLog } from '../../src/realtime/log.js';
import { describeWith } from '../support/tools.js';
import { redisForSuite } from './redis-server.js';
import { postWebhook, transactionEvent } from './support.js';

const SECRET = 'whsec_failed_delivery_0123456789';
const ACCOUNT = 43;

interface Receiver {
  port: number;
  /** What subscribers got, in order. */
  published: PaymentEvent[];
  /** Objects evicted, as `kind:id`. */
  evicted: string[];
  /** The next publish (or eviction) fails, once. */
  failNextPublish(): void;
  failNextEviction(): void;
  close(): Promise<void>;
}

async function startReceiver(ledger: DeliveryLedger): Promise<Receiver> {
  const logger = pino({ level: 'silent' });
  const inner = memoryBus(logger);
  const published: PaymentEvent[] = [];
  const evicted: string[] = [];
  inner.subscribe(ACCOUNT, (e) => published.push(e));
  let publishFails = false;
  let evictionFails = false;
  // The bus of a Redis that refused one PUBLISH: the receiver's only sign of it is the rejection.
  const bus: MemoryBus = {
    ...inner,
    subscribe: inner.subscribe.bind(inner),
    listenerCount: inner.listenerCount.bind(inner),
    close: inner.close.bind(inner),
    async publish(event) {
      if (publishFails) {
        publishFails = false;
        throw new Error('bus unreachable');
      }
      return inner.publish(event);
    },
  };
  const receive = createWebhookReceiver({
    secrets: [SECRET],
    log: ledgerLog(ledger, bus),
    logger,
    async evict(e) {
      if (evictionFails) {
        evictionFails = false;
        throw new Error('cache store unreachable');
      }
      evicted.push(`${e.object}:${e.objectId}`);
    },
  });
  const server = http.createServer((req, res) => void receive(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    published,
    evicted,
    failNextPublish: () => void (publishFails = true),
    failNextEviction: () => void (evictionFails = true),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const tx = (id: number, status: string, updatedAt: string) => ({ id, status, amount: 1000, updated_at: updatedAt, customer_id: null });
/** Nothing is published after the answer any more; kept as a margin that would show a late one. */
const settle = () => new Promise((r) => setTimeout(r, 30));

function failedDeliveryTests(makeLedger: () => DeliveryLedger): void {
  let receiver: Receiver;
  let objectId = 700;
  beforeAll(async () => {
    receiver = await startReceiver(makeLedger());
  });
  afterAll(() => receiver.close());
  const deliver = (body: string) => postWebhook(receiver.port, body, { secret: SECRET });
  const seen = (id: number) => receiver.published.filter((e) => e.objectId === id).map((e) => [e.entity?.status, e.current]);

  it('answers 503 to a status change whose publish failed, delivers its redelivery as current, and still orders the object meanwhile', async () => {
    const id = (objectId += 1);
    expect((await deliver(transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'pending', '2024-06-01T10:00:00.000Z') }))).status).toBe(200);
    await settle();

    const approved = transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'approved', '2024-06-01T10:00:05.000Z') });
    receiver.failNextPublish();
    expect((await deliver(approved)).status).toBe(503);
    await settle();
    expect(seen(id)).toEqual([['pending', true]]);

    // The version before the failed one was put back, not forgotten: an older state is still no news.
    await deliver(transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'pending', '2024-06-01T09:59:00.000Z') }));
    await settle();
    expect(seen(id).at(-1)).toEqual(['pending', false]);

    // The upstream redelivers what it got no 2xx for: the same event again.
    const again = await deliver(approved);
    expect(again).toEqual({ status: 200, json: { received: true, duplicate: false } });
    await settle();
    expect(seen(id)).toEqual([
      ['pending', true],
      ['pending', false],
      ['approved', true],
    ]);
  });

  it('answers 503 to the first event of an object whose publish failed, and delivers its redelivery once, as current', async () => {
    const id = (objectId += 1);
    const first = transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'approved', '2024-06-01T10:00:00.000Z') });
    receiver.failNextPublish();
    expect((await deliver(first)).status).toBe(503);
    expect((await deliver(first)).json).toEqual({ received: true, duplicate: false });
    expect((await deliver(first)).json).toEqual({ received: true, duplicate: true });
    await settle();
    expect(seen(id)).toEqual([['approved', true]]);
  });

  it('keeps a newer state recorded meanwhile when an older one failed: its redelivery is no state change', async () => {
    const id = (objectId += 1);
    const older = transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'pending', '2024-06-01T10:00:00.000Z') });
    receiver.failNextPublish();
    expect((await deliver(older)).status).toBe(503);
    await deliver(transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'approved', '2024-06-01T10:00:05.000Z') }));
    expect((await deliver(older)).status).toBe(200);
    await settle();
    expect(seen(id)).toEqual([
      ['approved', true],
      ['pending', false],
    ]);
  });

  it('evicts the object again when the upstream redelivers an event whose eviction failed', async () => {
    const id = (objectId += 1);
    const event = transactionEvent({ accountId: ACCOUNT, transaction: tx(id, 'approved', '2024-06-01T10:00:00.000Z') });
    receiver.failNextEviction();
    expect((await deliver(event)).status).toBe(503);
    await settle();
    expect(seen(id)).toEqual([]);

    const again = await deliver(event);
    expect(again).toEqual({ status: 200, json: { received: true, duplicate: false } });
    await settle();
    expect(receiver.evicted).toContain(`transaction:${id}`);
    expect(seen(id)).toEqual([['approved', true]]);
  });
}

describe('a webhook whose delivery failed, memory ledger', () => {
  failedDeliveryTests(() => memoryLedger());
});

describeWith('redis-server', 'a webhook whose delivery failed, Redis ledger', () => {
  const client = redisForSuite();
  failedDeliveryTests(() => redisLedger(client(), 'failed-delivery:'));
});
