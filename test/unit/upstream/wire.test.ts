/** Parameters to the wire: snake_case, filters in brackets, a customer referenced by id alone, nothing sent that was not given. */
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../../src/upstream/decimal.js';
import {
  customerBody,
  customerSearchQuery,
  eventListQuery,
  pageQuery,
  paymentSearchQuery,
  payoutBody,
  payoutStartBody,
  transactionCreateBody,
  transactionSendBody,
  transactionUpdateBody,
} from '../../../src/upstream/wire.js';

/** What JSON would send: undefined members dropped. */
const sent = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
const amount = Decimal.parse('1500.50')!;

describe('wire queries', () => {
  it('names page fields and filters as the upstream reads them', () => {
    expect(sent(pageQuery({ page: 2, perPage: 50 }))).toEqual({ page: 2, per_page: 50 });
    expect(sent(pageQuery())).toEqual({});
    expect(sent(paymentSearchQuery({ status: 'pending', customerId: 4, createdAfter: '2026-01-01', perPage: 10 }))).toEqual({
      per_page: 10, 'filters[status]': 'pending', 'filters[customer_id]': 4, 'filters[created_after]': '2026-01-01',
    });
    expect(sent(customerSearchQuery({ email: 'a@example.com', query: 'Kofi', createdBefore: '2026-02-01' }))).toEqual({
      'filters[email]': 'a@example.com', 'filters[q]': 'Kofi', 'filters[created_before]': '2026-02-01',
    });
    expect(sent(eventListQuery({ type: 'transaction.approved', objectId: 9, page: 1 }))).toEqual({ page: 1, 'filters[type]': 'transaction.approved', 'filters[object_id]': 9 });
  });
});

describe('wire bodies', () => {
  it('sends a new transaction in snake_case, its amount still a Decimal, its customer by details', () => {
    const body = transactionCreateBody({
      amount, currencyIso: 'XOF', description: 'Order 7', callbackUrl: 'https://shop.example/cb', merchantReference: 'ref-7', customMetadata: { cart: 7 },
      customer: { firstname: 'Kofi', lastname: 'Boateng', email: 'kofi@example.com', phoneNumber: { number: '+22997000000', country: 'bj' } },
    });
    expect(body.amount).toBe(amount);
    expect(sent(body)).toEqual({
      amount: '1500.5', description: 'Order 7', callback_url: 'https://shop.example/cb', currency: { iso: 'XOF' }, merchant_reference: 'ref-7', custom_metadata: { cart: 7 },
      customer: { firstname: 'Kofi', lastname: 'Boateng', email: 'kofi@example.com', phone_number: { number: '+22997000000', country: 'bj' } },
    });
  });

  it('references an existing customer by its id alone, whatever else is given', () => {
    expect(sent(payoutBody({ amount, currencyIso: 'XOF', customer: { id: 12, firstname: 'Ignored' } }))).toEqual({ amount: '1500.5', currency: { iso: 'XOF' }, customer: { id: 12 } });
  });

  it('sends only what a partial update gives', () => {
    expect(sent(transactionUpdateBody({ description: 'new' }))).toEqual({ description: 'new' });
    expect(sent(payoutBody({ mode: 'mtn' }))).toEqual({ mode: 'mtn' });
    expect(sent(customerBody({ email: 'b@example.com' }))).toEqual({ email: 'b@example.com' });
    expect(sent(transactionSendBody({ token: 'tok' }))).toEqual({ token: 'tok' });
  });

  it('wraps payouts to start in {"payouts": [...]}, each with its schedule and phone', () => {
    expect(sent(payoutStartBody([{ id: 1 }, { id: 2, scheduledAt: '2026-03-01T10:00:00Z', phoneNumber: { number: '+22990000000', country: 'BJ' } }]))).toEqual({
      payouts: [{ id: 1 }, { id: 2, scheduled_at: '2026-03-01T10:00:00Z', phone_number: { number: '+22990000000', country: 'BJ' } }],
    });
  });
});
