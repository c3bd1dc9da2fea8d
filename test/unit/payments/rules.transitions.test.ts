/**
 * The payment rules mutation testing found unchecked (npm run mutate): the
 * state changes a merchant may ask for, over every status, and the refusals'
 * exact wording.
 */
import { describe, expect, it, vi } from 'vitest';
import { Decimal } from '../../../src/upstream/decimal.js';
import { amountProblem, cancelTransition, currencyDecimals, customerRefProblem, PayoutStatus, startTransition, statusFilter, statusFromUpstream, TransactionStatus } from '../../../src/payments/rules.js';

const cancel: Record<string, 'apply' | 'already' | 'conflict'> = { PENDING: 'apply', CANCELED: 'already' };
const start: Record<string, 'apply' | 'already' | 'conflict'> = { PENDING: 'apply', SCHEDULED: 'already', STARTED: 'already', PROCESSING: 'already', SENT: 'already' };

describe('state changes', () => {
  it.each(Object.values(TransactionStatus))('cancel of a %s transaction', (status) => {
    const expected = cancel[status] ?? 'conflict';
    expect(cancelTransition(status.toLowerCase())).toBe(expected);
    expect(cancelTransition(status)).toBe(expected);
  });

  it.each(Object.values(PayoutStatus))('start of a %s payout', (status) => {
    const expected = start[status] ?? 'conflict';
    expect(startTransition(status.toLowerCase())).toBe(expected);
    expect(startTransition(status)).toBe(expected);
  });

  it('a status nobody knows is a conflict, never applied', () => {
    expect(cancelTransition('on_hold')).toBe('conflict');
    expect(startTransition('on_hold')).toBe('conflict');
  });
});

describe('refusals and warnings as written', () => {
  it('logs an unknown upstream status with its type and value', () => {
    const warn = vi.fn();
    statusFromUpstream('Payout', 'on_hold', { logger: { warn } });
    expect(warn).toHaveBeenCalledWith({ what: 'Payout.status', value: 'on_hold' }, 'unknown upstream status mapped to UNKNOWN');
  });

  it('says why UNKNOWN is no filter', () => {
    expect(statusFilter('UNKNOWN')).toEqual({ ok: false, message: '`UNKNOWN` is not a status one can filter on.' });
  });

  it('names every detail given beside an id, and takes details alone or an id alone', () => {
    expect(customerRefProblem({ id: '4', firstname: 'Ama', email: 'ama@example.com' })).toBe(
      'Give either `id` of an existing customer or the details of a new one, not both (got `id` and `firstname`, `email`).',
    );
    expect(customerRefProblem({ firstname: 'Ama', lastname: 'Mensah', email: null })).toBeNull();
    expect(customerRefProblem({ id: '4', firstname: null })).toBeNull();
    expect(customerRefProblem({ id: null, firstname: 'Ama' })).toBeNull();
  });

  it('gives a code Intl cannot read the default 2 decimals, and leaves it to the upstream to judge', () => {
    expect(currencyDecimals('1X')).toBe(2);
  });

  it('leaves the decimals of an amount with no currency to the upstream', () => {
    expect(amountProblem(Decimal.parse('1.005')!, null)).toBeNull();
    expect(amountProblem(Decimal.parse('0')!, null)).not.toBeNull();
  });
});
