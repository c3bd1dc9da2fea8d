import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { memoryBus } from '../../src/realtime/bus.js';
import type { PaymentEvent } from '../../src/realtime/events.js';
import { memoryLedger, type DeliveryLedger } from '../../src/realtime/ledger.js';
import { ledgerLog } from '../../src/realtime/log.js';
import { createWebhookReceiver } from '../../src/http/webhook-route.js';
import { signWebhookBody } from '../../emulator/index.js';
import { Decimal } from '../../src/upstream/decimal.js';
import { postWebhook, transactionEvent } from './support.js';

const OLD_SECRET = 'whsec_old_0123456789abcdef';
const NEW_SECRET = 'whsec_new_fedcba9876543210';
const ACCOUNT = 41;

interface Receiver {
  port: number;
  published: PaymentEvent[];
  logs: string[];
  close(): Promise<void>;
}

async function startReceiver(ledger: DeliveryLedger = memoryLedger(), evict?: (event: Pick<PaymentEvent, 'object' | 'objectId'>) => Promise<void>): Promise<Receiver> {
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const bus = memoryBus(logger);
  const published: PaymentEvent[] = [];
  bus.subscribe(ACCOUNT, (e) => published.push(e));
  const receive = createWebhookReceiver({ secrets: [OLD_SECRET, NEW_SECRET], log: ledgerLog(ledger, bus), logger, ...(evict ? { evict } : {}) });
  const server = http.createServer((req, res) => void receive(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    published,
    logs,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const now = () => Math.floor(Date.now() / 1000);
const tx = (id: number, status: string, updatedAt: string) => ({ id, status, amount: 1000, updated_at: updatedAt, customer_id: null });
const settle = () => new Promise((r) => setTimeout(r, 30));

describe('webhook receiver', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.published.length = 0;
    receiver.logs.length = 0;
  });

  const body = transactionEvent({ accountId: ACCOUNT, transaction: tx(7, 'approved', '2024-05-01T10:00:00.000Z') });
  // Headers are built when each case runs: a timestamp taken at collection time would age.
  const good = () => signWebhookBody(NEW_SECRET, body, now());

  it.each([
    { case: 'no signature header', header: () => null, sent: body, status: 400 },
    { case: 'a header without a timestamp', header: () => `s=${good().split(',s=')[1]!}`, sent: body, status: 400 },
    { case: 'a header with a non-hex signature', header: () => `t=${now()},s=not-hex`, sent: body, status: 400 },
    { case: 'a header that is not key=value pairs', header: () => 'garbage', sent: body, status: 400 },
    { case: 'a signature made with an unknown secret', header: () => signWebhookBody('whsec_attacker', body, now()), sent: body, status: 401 },
    { case: 'a tampered body', header: good, sent: body.replace('"amount":1000', '"amount":1'), status: 401 },
    { case: 'a timestamp 301 s in the past', header: () => signWebhookBody(NEW_SECRET, body, now() - 301), sent: body, status: 401 },
    { case: 'a timestamp 301 s in the future', header: () => signWebhookBody(NEW_SECRET, body, now() + 301), sent: body, status: 401 },
  ])('refuses $case with $status, publishes nothing and logs the reason without the secret', async ({ header: makeHeader, sent, status }) => {
    const header = makeHeader();
    const res = await postWebhook(receiver.port, sent, { header });
    await settle();
    expect(res.status).toBe(status);
    expect(receiver.published).toEqual([]);
    const refusal = receiver.logs.find((l) => l.includes('webhook refused'));
    expect(refusal).toBeDefined();
    expect(JSON.parse(refusal!)).toMatchObject({ reason: expect.any(String) });
    for (const line of receiver.logs) {
      expect(line).not.toContain(OLD_SECRET);
      expect(line).not.toContain(NEW_SECRET);
      if (header) expect(line).not.toContain(header);
    }
  });

  it('accepts a timestamp within the 300 s tolerance on either side', async () => {
    const early = transactionEvent({ accountId: ACCOUNT, transaction: tx(8, 'pending', '2024-05-01T10:00:00.000Z') });
    const late = transactionEvent({ accountId: ACCOUNT, transaction: tx(9, 'pending', '2024-05-01T10:00:00.000Z') });
    expect((await postWebhook(receiver.port, early, { secret: NEW_SECRET, at: now() - 290 })).status).toBe(200);
    expect((await postWebhook(receiver.port, late, { secret: NEW_SECRET, at: now() + 290 })).status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => e.objectId)).toEqual([8, 9]);
  });

  it('verifies against every configured secret, so a secret can be rotated without losing events', async () => {
    const a = transactionEvent({ accountId: ACCOUNT, transaction: tx(10, 'pending', '2024-05-01T10:00:00.000Z') });
    const b = transactionEvent({ accountId: ACCOUNT, transaction: tx(11, 'pending', '2024-05-01T10:00:00.000Z') });
    expect((await postWebhook(receiver.port, a, { secret: OLD_SECRET })).status).toBe(200);
    expect((await postWebhook(receiver.port, b, { secret: NEW_SECRET })).status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => e.objectId)).toEqual([10, 11]);
  });

  it('accepts a header carrying several signatures when one of them matches', async () => {
    const c = transactionEvent({ accountId: ACCOUNT, transaction: tx(12, 'pending', '2024-05-01T10:00:00.000Z') });
    const t = now();
    const wrong = signWebhookBody('whsec_retired', c, t).split(',')[1]!;
    const right = signWebhookBody(OLD_SECRET, c, t).split(',')[1]!;
    expect((await postWebhook(receiver.port, c, { header: `t=${t},${wrong},${right}` })).status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => e.objectId)).toEqual([12]);
  });

  it('acknowledges a duplicate delivery and publishes the event once', async () => {
    const event = transactionEvent({ accountId: ACCOUNT, transaction: tx(13, 'approved', '2024-05-01T10:00:00.000Z') });
    const first = await postWebhook(receiver.port, event, { secret: NEW_SECRET });
    const again = await postWebhook(receiver.port, event, { secret: OLD_SECRET });
    await settle();
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.json).toMatchObject({ duplicate: true });
    expect(receiver.published.map((e) => e.objectId)).toEqual([13]);
  });

  it('marks an event older than the last one seen for its object as not current, so it cannot roll the status back', async () => {
    const approved = transactionEvent({ accountId: ACCOUNT, transaction: tx(14, 'approved', '2024-05-01T10:00:05.000Z') });
    const pending = transactionEvent({ accountId: ACCOUNT, transaction: tx(14, 'pending', '2024-05-01T10:00:00.000Z') });
    expect((await postWebhook(receiver.port, approved, { secret: NEW_SECRET })).status).toBe(200);
    expect((await postWebhook(receiver.port, pending, { secret: NEW_SECRET })).status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => [e.entity?.status, e.current])).toEqual([
      ['approved', true],
      ['pending', false],
    ]);
  });

  it('orders two snapshots of the same millisecond by event id', async () => {
    const stamp = '2024-05-01T11:00:00.000Z';
    const later = transactionEvent({ accountId: ACCOUNT, eventId: 5002, transaction: tx(15, 'approved', stamp) });
    const earlier = transactionEvent({ accountId: ACCOUNT, eventId: 5001, transaction: tx(15, 'pending', stamp) });
    await postWebhook(receiver.port, later, { secret: NEW_SECRET });
    await postWebhook(receiver.port, earlier, { secret: NEW_SECRET });
    await settle();
    expect(receiver.published.map((e) => e.current)).toEqual([true, false]);
  });

  it('refuses with 400 a signed event whose entity nests deeper than the gateway reads items, and takes one at the limit', async () => {
    const nested = (objects: number) => `${'{"a":'.repeat(objects)}1${'}'.repeat(objects)}`;
    // An event is an item like any: level 1, its entity level 2, the entity's metadata level 3, so 998 nested
    // objects there make the 1,000 levels the gateway takes.
    const event = (id: number, objects: number) =>
      transactionEvent({ accountId: ACCOUNT, transaction: { ...tx(id, 'approved', '2024-05-02T10:00:00.000Z'), metadata: 'HERE' } }).replace('"HERE"', nested(objects));

    const over = event(31, 999);
    const refused = await postWebhook(receiver.port, over, { secret: NEW_SECRET });
    expect(refused.status).toBe(400);

    const atLimit = event(32, 998);
    const taken = await postWebhook(receiver.port, atLimit, { secret: NEW_SECRET });
    expect(taken.status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => e.objectId)).toEqual([32]);
  });

  it('evicts the object of an event it refuses for its depth, and answers 503 when that eviction fails', async () => {
    const evicted: string[] = [];
    let failing = false;
    const evicting = await startReceiver(memoryLedger(), async (e) => {
      if (failing) throw new Error('cache store down');
      evicted.push(`${e.object}:${e.objectId}`);
    });
    try {
      const deep = transactionEvent({ accountId: ACCOUNT, transaction: { ...tx(33, 'approved', '2024-05-03T10:00:00.000Z'), metadata: 'HERE' } })
        .replace('"HERE"', `${'{"a":'.repeat(999)}1${'}'.repeat(999)}`);
      expect((await postWebhook(evicting.port, deep, { secret: NEW_SECRET })).status).toBe(400);
      expect(evicted).toEqual(['transaction:33']);
      failing = true;
      expect((await postWebhook(evicting.port, deep, { secret: NEW_SECRET })).status).toBe(503);
      expect(evicting.published).toEqual([]);
    } finally {
      await evicting.close();
    }
  });

  // Amounts no JS number holds: 17 significant digits before the point, and 0.1 as the double nearest it, written out.
  const BIG = '12345678901234567.89';
  const TINY = '0.1000000000000000055511151231257827';
  /** A transaction event whose amount and fees are written into the body as these number tokens, untouched by JSON.stringify. */
  const withAmounts = (id: number, amount: string, fees: string, extra: Record<string, unknown> = {}) =>
    transactionEvent({ accountId: ACCOUNT, transaction: { ...tx(id, 'approved', '2024-05-04T10:00:00.000Z'), amount: 'AMOUNT', fees: 'FEES', ...extra } })
      .replace('"AMOUNT"', amount)
      .replace('"FEES"', fees);

  it('publishes amounts no JS number holds with every digit, and every other number as JSON.parse makes it', async () => {
    const body = withAmounts(34, BIG, TINY, { metadata: { count: 7, ratio: 'RATIO' } }).replace('"RATIO"', BIG);
    expect((await postWebhook(receiver.port, body, { secret: NEW_SECRET })).status).toBe(200);
    await settle();
    expect(receiver.published).toHaveLength(1);
    const [event] = receiver.published;
    expect(event).toMatchObject({ id: expect.any(Number), accountId: ACCOUNT, objectId: 34, current: true });
    expect(event!.entity!.amount).toBeInstanceOf(Decimal);
    expect(String(event!.entity!.amount)).toBe(BIG);
    expect(String(event!.entity!.fees)).toBe(TINY);
    // Not an amount: a JS number, as before, rounded as JSON.parse rounds it.
    expect(event!.entity!.metadata).toEqual({ count: 7, ratio: 12345678901234568 });
    expect(event!.entity!.id).toBe(34);
  });

  it('keeps every digit of a body with a repeated key, whose last value counts as JSON.parse has it', async () => {
    // The entity's description twice with different values: lossless-json refuses that by default.
    const body = withAmounts(38, BIG, '1', { description: 'first' }).replace('"description":"first"', '"description":"first","description":"last"');
    expect(body).toContain('"description":"last"');
    expect((await postWebhook(receiver.port, body, { secret: NEW_SECRET })).status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => [String(e.entity?.amount), e.entity?.description])).toEqual([[BIG, 'last']]);
  });

  it('leaves a body whose numbers are all exact as JSON.parse reads it: amounts stay JS numbers', async () => {
    const body = withAmounts(35, '2500', '12.5');
    expect((await postWebhook(receiver.port, body, { secret: NEW_SECRET })).status).toBe(200);
    await settle();
    expect(receiver.published.map((e) => [e.entity?.amount, e.entity?.fees])).toEqual([[2500, 12.5]]);
  });

  it('takes an exact amount in an event nested to the limit, and refuses one nested deeper, past what lossless-json can read, after evicting its object', async () => {
    const evicted: string[] = [];
    const evicting = await startReceiver(memoryLedger(), async (e) => void evicted.push(`${e.object}:${e.objectId}`));
    try {
      const nested = (id: number, objects: number) =>
        withAmounts(id, BIG, '1', { metadata: 'HERE' }).replace('"HERE"', `${'{"a":'.repeat(objects)}1${'}'.repeat(objects)}`);
      expect((await postWebhook(evicting.port, nested(36, 998), { secret: NEW_SECRET })).status).toBe(200);
      await settle();
      expect(evicting.published.map((e) => String(e.entity?.amount))).toEqual([BIG]);
      // lossless-json recurses and gives up some thousands of levels down; the body is refused for its depth all the same.
      expect((await postWebhook(evicting.port, nested(37, 20_000), { secret: NEW_SECRET })).status).toBe(400);
      expect(evicted).toEqual(['transaction:36', 'transaction:37']);
      await settle();
      expect(evicting.published).toHaveLength(1);
    } finally {
      await evicting.close();
    }
  });

  it('refuses a signed body that is not an event with 400', async () => {
    const res = await postWebhook(receiver.port, JSON.stringify({ hello: 'world' }), { secret: NEW_SECRET });
    expect(res.status).toBe(400);
    expect(receiver.published).toEqual([]);
  });
});

describe('webhook receiver with a failing delivery store', () => {
  it('answers 503 so the upstream retries, and publishes nothing', async () => {
    const broken: DeliveryLedger = {
      claim: () => Promise.reject(new Error('store down')),
      release: () => Promise.resolve(),
      advance: () => Promise.reject(new Error('store down')),
      retreat: () => Promise.resolve(),
      advanceTo: () => Promise.reject(new Error('store down')),
    };
    const receiver = await startReceiver(broken);
    try {
      const event = transactionEvent({ accountId: ACCOUNT, transaction: tx(16, 'approved', '2024-05-01T10:00:00.000Z') });
      const res = await postWebhook(receiver.port, event, { secret: NEW_SECRET });
      await settle();
      expect(res.status).toBe(503);
      expect(receiver.published).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
