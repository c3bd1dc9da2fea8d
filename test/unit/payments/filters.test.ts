import { describe, expect, it } from 'vitest';
import { customerCheck, eventCheck, paymentCheck } from '../../../src/payments/filters.js';
import type { CustomerModel, EventModel } from '../../../src/upstream/models.js';

const payment = (over: Partial<{ status: string; customer_id: number | null; created_at: string | null }> = {}) => ({
  status: 'approved',
  customer_id: 7,
  created_at: '2026-03-01T12:00:00.000Z',
  ...over,
});

describe('paymentCheck', () => {
  it('is absent without a filter, so nothing is checked', () => {
    expect(paymentCheck({})).toBeUndefined();
    expect(paymentCheck({ status: undefined, customerId: undefined })).toBeUndefined();
  });

  it('matches the status whatever its case, and the customer', () => {
    const check = paymentCheck({ status: 'approved', customerId: 7 })!;
    expect(check(payment())).toBe(true);
    expect(check(payment({ status: 'APPROVED' }))).toBe(true);
    expect(check(payment({ status: 'pending' }))).toBe(false);
    expect(check(payment({ customer_id: 8 }))).toBe(false);
    expect(check(payment({ customer_id: null }))).toBe(false);
  });

  it('keeps both bounds of a creation range, inclusive, to the upstream precision', () => {
    const check = paymentCheck({ createdAfter: '2026-03-01T12:00:00.000Z', createdBefore: '2026-03-02T12:00:00.000Z' })!;
    expect(check(payment({ created_at: '2026-03-01T12:00:00.000Z' }))).toBe(true);
    expect(check(payment({ created_at: '2026-03-02T12:00:00.000Z' }))).toBe(true);
    expect(check(payment({ created_at: '2026-03-02T13:00:00+01:00' }))).toBe(true);
    expect(check(payment({ created_at: '2026-03-01T11:59:59.999Z' }))).toBe(false);
    expect(check(payment({ created_at: '2026-03-02T12:00:00.001Z' }))).toBe(false);
    expect(check(payment({ created_at: '2026-03-02T12:00:00.000500Z' }))).toBe(false);
    expect(check(payment({ created_at: '2026-03-01T12:00:00.000500Z' }))).toBe(true);
  });

  it('drops a row that cannot show it is in the range', () => {
    const check = paymentCheck({ createdAfter: '2026-03-01T00:00:00.000Z' })!;
    expect(check(payment({ created_at: null }))).toBe(false);
    expect(check(payment({ created_at: 'soon' }))).toBe(false);
  });
});

describe('customerCheck', () => {
  const ama = { id: 1, firstname: 'Ama', lastname: 'Mensah', email: 'Ama.Mensah@example.com', created_at: '2026-03-01T12:00:00.000Z' } as CustomerModel;

  it('matches the e-mail but for case', () => {
    expect(customerCheck({ email: 'ama.mensah@example.com' })!(ama)).toBe(true);
    expect(customerCheck({ email: 'ama@example.com' })!(ama)).toBe(false);
  });

  it('finds free text in the first name, the last name, the e-mail or "first last"', () => {
    for (const text of ['ama', 'MENSAH', 'example.com', 'Ama Mensah', '  mens  ']) expect(customerCheck({ query: text })!(ama)).toBe(true);
    for (const text of ['kofi', 'mensah ama']) expect(customerCheck({ query: text })!(ama)).toBe(false);
  });

  it('checks the creation range too', () => {
    expect(customerCheck({ createdBefore: '2026-02-28T00:00:00.000Z' })!(ama)).toBe(false);
  });
});

describe('eventCheck', () => {
  const event = { id: 9, type: 'transaction.approved', object_id: 5, entity: { id: 5 } } as EventModel;

  it('matches the type exactly and the object id, or the entity id when object_id is missing', () => {
    expect(eventCheck({ type: 'transaction.approved', objectId: 5 })!(event)).toBe(true);
    expect(eventCheck({ type: 'transaction' })!(event)).toBe(false);
    expect(eventCheck({ objectId: 6 })!(event)).toBe(false);
    expect(eventCheck({ objectId: 5 })!({ ...event, object_id: null })).toBe(true);
  });
});
