/**
 * Any value the spec allows survives, and a value the schema cannot represent
 * fails only its own field as UPSTREAM_ERROR, never the object and never
 * INTERNAL_SERVER_ERROR. Output scalars serve what the upstream sent. Run
 * against a scripted upstream over HTTP, with a property test over random
 * spec-shaped objects (fast-check).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/server/index.js';
import { aCurrency, aCustomer, aPayout, aTransaction } from '../upstream/fixtures.js';
import type { FakeUpstream } from '../upstream/fake-upstream.js';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.js';

interface Answer {
  data?: Record<string, Record<string, unknown> | null> | null;
  errors?: { path?: (string | number)[]; extensions?: { code?: string } }[];
}

const TRANSACTION_FIELDS = `id reference amountMoney { amount } description callbackUrl status isPaid mode metadata commissionMoney { amount } feesMoney { amount }
  amountTransferredMoney { amount } amountDebitedMoney { amount } createdAt updatedAt approvedAt canceledAt declinedAt refundedAt transferredAt deletedAt
  lastErrorCode customMetadata receiptUrl transactionKey merchantReference customer { id email fullName } currency { iso }`;
const PAYOUT_FIELDS = `id reference amountMoney { amount } status mode lastErrorCode createdAt updatedAt scheduledAt sentAt failedAt deletedAt
  metadata customMetadata merchantReference customer { id email } currency { iso }`;
const CUSTOMER_FIELDS = 'id firstname lastname fullName email createdAt updatedAt deletedAt';

describe('spec-shaped upstream values', () => {
  let scripted: ScriptedGateway;
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  let objects: { transaction: object; payout: object; customer: object };

  beforeAll(async () => {
    // Each read must decode what the scripted upstream sends now: no entity cache across requests.
    scripted = await startScriptedGateway({ RATE_LIMIT_PER_MINUTE: '0', ENTITY_CACHE: 'false' });
    ({ upstream, gateway } = scripted);
    upstream.replyWith((req) => {
      if (req.path.startsWith('/v1/currencies')) return { json: { 'v1/currencies': [aCurrency()] } };
      if (req.path.startsWith('/v1/customers')) return { json: { 'v1/customer': objects.customer } };
      if (req.path.startsWith('/v1/payouts')) return { json: { 'v1/payout': objects.payout } };
      return { json: { 'v1/transaction': objects.transaction } };
    });
  });
  afterAll(() => scripted?.stop());

  const gql = async (query: string): Promise<Answer> => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk_sandbox_spec_shaped' },
      body: JSON.stringify({ query }),
    });
    return (await res.json()) as Answer;
  };
  const readAll = () =>
    gql(`{ transaction(id: "101") { ${TRANSACTION_FIELDS} } payout(id: "201") { ${PAYOUT_FIELDS} } customer(id: "7") { ${CUSTOMER_FIELDS} } }`);

  it('reads Unix and zoneless timestamps as RFC 3339, and serves offsets and microseconds as sent', async () => {
    objects = {
      transaction: aTransaction({ created_at: 1700000000, updated_at: '2024-01-02 10:00:00', approved_at: '2024-01-02T10:00:00.123456+01:00' }),
      payout: aPayout(),
      customer: aCustomer(),
    };
    const answer = await readAll();
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.transaction).toMatchObject({
      createdAt: '2023-11-14T22:13:20.000Z',
      updatedAt: '2024-01-02T10:00:00Z',
      approvedAt: '2024-01-02T10:00:00.123456+01:00',
    });
  });

  it('serves a URL as sent, and fails only the field of a value no scalar can represent', async () => {
    objects = {
      transaction: aTransaction({ receipt_url: 'HTTPS://Receipts.Example/r/1', callback_url: 'not a url', approved_at: 'yesterday' }),
      payout: aPayout(),
      customer: aCustomer({ email: 'not-an-email' }),
    };
    const answer = await readAll();
    expect(answer.data!.transaction).toMatchObject({ id: '101', receiptUrl: 'HTTPS://Receipts.Example/r/1', callbackUrl: null, approvedAt: null });
    expect(answer.data!.customer).toMatchObject({ id: '7', email: null, fullName: 'Ada Lovelace' });
    const failed = (answer.errors ?? []).map((e) => [e.path?.join('.'), e.extensions?.code]);
    expect(failed.sort()).toEqual([
      ['customer.email', 'UPSTREAM_ERROR'],
      ['payout.customer.email', 'UPSTREAM_ERROR'],
      ['transaction.approvedAt', 'UPSTREAM_ERROR'],
      ['transaction.callbackUrl', 'UPSTREAM_ERROR'],
      ['transaction.customer.email', 'UPSTREAM_ERROR'],
    ]);
  });

  // Values of the spec's types ("string", "timestamp", "object", "number"), each field present, null or absent.
  const text = fc.oneof(fc.string({ maxLength: 12 }), fc.webUrl(), fc.emailAddress(), fc.constant(''));
  const when = fc.oneof(
    fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
    fc.integer({ min: 0, max: 4_102_444_800 }),
    fc.constantFrom('2024-01-02 10:00:00', '2024-01-02', '2024-01-02T10:00:00.123456-05:00', 'soon'),
    text,
  );
  const amount = fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.double({ min: 0, max: 1e9, noNaN: true, noDefaultInfinity: true }));
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(fc.option(arb, { nil: null }), { nil: undefined });
  const record = (fields: Record<string, fc.Arbitrary<unknown>>) =>
    fc.record(Object.fromEntries(Object.entries(fields).map(([k, arb]) => [k, maybe(arb)]))).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
  const status = fc.oneof(fc.constantFrom('pending', 'approved', 'canceled', 'declined', 'refunded', 'sent', 'failed', 'scheduled'), fc.string({ maxLength: 10 }));
  const object = fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxKeys: 3 });
  const transaction = record({
    reference: text, description: text, callback_url: text, mode: text, metadata: object, commission: amount, fees: amount, fixed_commission: amount,
    amount_transferred: amount, amount_debited: amount, created_at: when, updated_at: when, approved_at: when, canceled_at: when, declined_at: when,
    refunded_at: when, transferred_at: when, deleted_at: when, last_error_code: text, custom_metadata: object, receipt_url: text, transaction_key: text, merchant_reference: text,
  });
  const payout = record({ reference: text, mode: text, last_error_code: text, created_at: when, updated_at: when, scheduled_at: when, sent_at: when, failed_at: when, deleted_at: when, metadata: object, custom_metadata: object, merchant_reference: text });
  const customer = record({ firstname: text, lastname: text, full_name: text, email: text, created_at: when, updated_at: when, deleted_at: when });

  it('never answers INTERNAL_SERVER_ERROR, nor fails a whole object, for random spec-shaped objects', async () => {
    await fc.assert(
      fc.asyncProperty(transaction, payout, customer, status, status, amount, async (t, p, c, tStatus, pStatus, tAmount) => {
        objects = {
          transaction: { id: 101, status: tStatus, amount: tAmount, currency_id: 1, customer_id: 7, ...t },
          payout: { id: 201, status: pStatus, amount: tAmount, currency_id: 1, customer_id: 7, ...p },
          customer: { id: 7, ...c },
        };
        const answer = await readAll();
        for (const error of answer.errors ?? []) {
          expect(error.extensions?.code).toBe('UPSTREAM_ERROR');
          // A bad value costs its field, not the object around it.
          expect(error.path?.length ?? 0).toBeGreaterThan(1);
        }
        for (const root of ['transaction', 'payout', 'customer']) expect(answer.data?.[root]).toMatchObject({ id: root === 'customer' ? '7' : expect.any(String) });
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});
