import { describe, expect, it, vi } from 'vitest';
import {
  customerRefProblem,
  finalStatuses,
  InputRule,
  isFinalPayout,
  isFinalTransaction,
  isPaid,
  PaymentIntentStatus,
  PayoutStatus,
  statusFilter,
  statusFromUpstream,
  TransactionStatus,
} from '../../../src/payments/rules.js';

const values = (e: Record<string, string>) => Object.values(e).filter((v) => v !== 'UNKNOWN');
const logger = () => ({ warn: vi.fn() });

/** Every transaction status of the schema, with the rules it must obey. */
const transactionTable: Record<string, { paid: boolean; final: boolean }> = {
  PENDING: { paid: false, final: false },
  APPROVED: { paid: true, final: false },
  DECLINED: { paid: false, final: true },
  CANCELED: { paid: false, final: true },
  REFUNDED: { paid: true, final: true },
  TRANSFERRED: { paid: true, final: false },
  APPROVED_PARTIALLY_REFUNDED: { paid: true, final: false },
  TRANSFERRED_PARTIALLY_REFUNDED: { paid: true, final: false },
  EXPIRED: { paid: false, final: true },
};

const payoutFinal: Record<string, boolean> = {
  PENDING: false,
  SCHEDULED: false,
  STARTED: false,
  PROCESSING: false,
  SENT: true,
  FAILED: true,
};

describe('payment rules over every status of the schema', () => {
  it('the tables cover exactly the schema enums', () => {
    expect(Object.keys(transactionTable).sort()).toEqual(values(TransactionStatus).sort());
    expect(Object.keys(payoutFinal).sort()).toEqual(values(PayoutStatus).sort());
  });

  it('hands the final statuses over in both spellings, the same as the rules test one by one', () => {
    const { transaction, payout } = finalStatuses();
    const finalTx = Object.keys(transactionTable).filter((s) => transactionTable[s]!.final);
    expect([...transaction].sort()).toEqual([...finalTx, ...finalTx.map((s) => s.toLowerCase())].sort());
    const finalPayouts = Object.keys(payoutFinal).filter((s) => payoutFinal[s]);
    expect([...payout].sort()).toEqual([...finalPayouts, ...finalPayouts.map((s) => s.toLowerCase())].sort());
  });

  describe.each(values(TransactionStatus))('transaction %s', (status) => {
    const upstream = status.toLowerCase();
    it('maps from the upstream value without a warning', () => {
      const log = logger();
      expect(statusFromUpstream('Transaction', upstream, { logger: log })).toBe(status);
      expect(log.warn).not.toHaveBeenCalled();
    });
    it(`is ${transactionTable[status]!.paid ? '' : 'not '}paid`, () => {
      expect(isPaid(upstream)).toBe(transactionTable[status]!.paid);
    });
    it(`is ${transactionTable[status]!.final ? '' : 'not '}final`, () => {
      expect(isFinalTransaction(upstream)).toBe(transactionTable[status]!.final);
    });
    it('can be filtered on, as the upstream lowercase value', () => {
      expect(statusFilter(status)).toEqual({ ok: true, value: upstream });
    });
  });

  describe.each(values(PayoutStatus))('payout %s', (status) => {
    it('maps from the upstream value and has its final flag', () => {
      const log = logger();
      expect(statusFromUpstream('Payout', status.toLowerCase(), { logger: log })).toBe(status);
      expect(log.warn).not.toHaveBeenCalled();
      expect(isFinalPayout(status.toLowerCase())).toBe(payoutFinal[status]);
    });
  });

  it.each(values(PaymentIntentStatus))('payment intent %s maps from the upstream value', (status) => {
    expect(statusFromUpstream('PaymentIntent', status.toLowerCase(), { logger: logger() })).toBe(status);
  });

  it.each(['Transaction', 'Payout', 'PaymentIntent'] as const)('%s: an unknown upstream value is UNKNOWN and logged, never a throw', (type) => {
    for (const value of ['on_hold', '', null, undefined, 'unknown']) {
      const log = logger();
      expect(statusFromUpstream(type, value, { logger: log })).toBe('UNKNOWN');
      expect(log.warn).toHaveBeenCalledTimes(1);
    }
  });

  it('reads the logger only to warn: an operation\'s logger is built on first read (src/context.ts)', () => {
    let reads = 0;
    const log = logger();
    const where = {
      get logger() {
        reads += 1;
        return log;
      },
    };
    expect(statusFromUpstream('Transaction', 'approved', where)).toBe('APPROVED');
    expect(reads).toBe(0);
    expect(statusFromUpstream('Transaction', 'on_hold', where)).toBe('UNKNOWN');
    expect(reads).toBe(1);
  });

  it('UNKNOWN is refused as a filter; no filter is no status', () => {
    expect(statusFilter('UNKNOWN')).toMatchObject({ ok: false });
    expect(statusFilter(undefined)).toEqual({ ok: true, value: undefined });
    expect(statusFilter(null)).toEqual({ ok: true, value: undefined });
  });

  it('unknown and odd statuses are neither paid nor final', () => {
    for (const value of ['on_hold', '', 'unknown']) {
      expect(isPaid(value)).toBe(false);
      expect(isFinalTransaction(value)).toBe(false);
      expect(isFinalPayout(value)).toBe(false);
    }
  });
});

describe('input rules', () => {
  it.each([
    [1, true],
    [0.5, true],
    [0, false],
    [-1, false],
  ])('amount %s valid: %s', (amount, ok) => expect(InputRule.amount.test(amount)).toBe(ok));

  it.each([
    ['XOF', true],
    ['xof', true],
    ['XO', false],
    ['XOFF', false],
    ['X0F', false],
  ])('currency %s valid: %s', (iso, ok) => expect(InputRule.currencyIso.test(iso)).toBe(ok));

  it.each([
    ['mtn', true],
    ['mtn_open', true],
    ['moov_tg', true],
    ['MTN', false],
    ['mtn/../x', false],
    ['', false],
  ])('mode %s valid: %s', (mode, ok) => expect(InputRule.mode.test(mode)).toBe(ok));

  // The weakly typed string inputs (EmailAddress, URL, CountryCode) are judged here, not by the scalar.
  it.each([
    ['ama@example.com', true],
    ['a@b', true],
    ['ama-at-example', false],
    ['ama@', false],
    ['', false],
  ])('e-mail %j valid: %s', (email, ok) => expect(InputRule.email.test(email)).toBe(ok));

  it.each([
    ['https://shop.example.com/cb', true],
    ['http://127.0.0.1:3000/done?x=1', true],
    ['/checkout/done', false],
    ['shop.example.com/cb', false],
    ['', false],
  ])('URL %j valid: %s', (url, ok) => expect(InputRule.url.test(url)).toBe(ok));

  it.each([
    ['BJ', true],
    ['CI', true],
    ['bj', true],
    ['ZZ', false],
    ['BEN', false],
    ['', false],
  ])('country %j valid: %s', (code, ok) => expect(InputRule.country.test(code)).toBe(ok));

  it.each([
    ['tok_abc', true],
    ['x'.repeat(200), true],
    ['x'.repeat(201), false],
    ['   ', false],
    ['', false],
  ])('token %j valid: %s', (token, ok) => expect(InputRule.token.test(token)).toBe(ok));

  it.each([
    [{ id: '7' }, false],
    [{ firstname: 'A', lastname: 'B', email: 'a@example.com' }, false],
    [{ id: '7', firstname: null, lastname: undefined }, false],
    [{}, false],
    [{ id: '7', firstname: 'A' }, true],
    [{ id: '7', email: 'a@example.com' }, true],
    [{ id: '7', phoneNumber: { number: '1', country: 'BJ' } }, true],
  ])('customer reference %j is ambiguous: %s', (ref, ambiguous) => {
    const problem = customerRefProblem(ref);
    expect(problem !== null).toBe(ambiguous);
    // The message names what clashed, so a developer sees which fields to drop.
    if (problem) expect(problem).toContain('`id`');
  });
});
