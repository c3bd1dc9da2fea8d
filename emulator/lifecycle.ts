/**
 * The sandbox's rules: which phone numbers approve, decline or never answer,
 * the fee rule, and the status moves a caller may ask for. Documented in
 * README.md; tests rely on every value here.
 */

export type Outcome = 'success' | 'failure' | 'no_answer';

export interface SandboxPhone {
  /** Matched against the last 8 digits, so `+22964000001` and `64000001` are the same. */
  number: string;
  outcome: Outcome;
  /** `last_error_code` on failure. */
  errorCode: string | null;
  transaction: string;
  payout: string;
}

export const SANDBOX_PHONES: readonly SandboxPhone[] = [
  { number: '64000001', outcome: 'success', errorCode: null, transaction: 'approved', payout: 'sent' },
  { number: '64000002', outcome: 'failure', errorCode: 'INSUFFICIENT_FUNDS', transaction: 'declined', payout: 'failed' },
  { number: '64000003', outcome: 'no_answer', errorCode: null, transaction: 'stays pending', payout: 'stays started' },
  { number: '64000004', outcome: 'failure', errorCode: 'ACCOUNT_NOT_FOUND', transaction: 'declined', payout: 'failed' },
];

const DEFAULT_PHONE: SandboxPhone = {
  number: '*',
  outcome: 'success',
  errorCode: null,
  transaction: 'approved',
  payout: 'sent',
};

export function sandboxOutcome(phoneNumber: string): SandboxPhone {
  const digits = phoneNumber.replace(/\D/g, '');
  const last8 = digits.slice(-8);
  return SANDBOX_PHONES.find((p) => p.number === last8) ?? DEFAULT_PHONE;
}

/** 1.5 %, rounded half up to the unit. */
export const COMMISSION_RATE_PER_MILLE = 15;
export const FIXED_COMMISSION = 0;

export interface Fees {
  commission: number;
  fixed_commission: number;
  fees: number;
  amount_debited: number;
  amount_transferred: number;
}

/**
 * One rule for both directions: `fees = commission + fixed_commission` with
 * `commission = round(amount * 1.5 %)` and `fixed_commission = 0`; and always
 * `amount_debited = amount_transferred + fees`.
 * - A transaction (collection) debits the payer `amount`; the merchant receives `amount - fees`.
 * - A payout transfers `amount` to the beneficiary; the merchant is debited `amount + fees`.
 * Integer arithmetic only: fees never exceed the amount.
 */
export function computeFees(amount: number, direction: 'collection' | 'payout'): Fees {
  const commission = Math.floor((amount * COMMISSION_RATE_PER_MILLE + 500) / 1000);
  const fees = commission + FIXED_COMMISSION;
  return direction === 'collection'
    ? { commission, fixed_commission: FIXED_COMMISSION, fees, amount_debited: amount, amount_transferred: amount - fees }
    : { commission, fixed_commission: FIXED_COMMISSION, fees, amount_debited: amount + fees, amount_transferred: amount };
}

/** Moves a caller may request with `PUT /v1/transactions/{id}` `{status}`; anything else is a 409. */
export const TRANSACTION_MOVES: Readonly<Record<string, readonly string[]>> = {
  pending: ['canceled', 'approved', 'declined'],
  approved: ['refunded', 'transferred'],
  transferred: ['refunded'],
  declined: [],
  canceled: [],
  refunded: [],
};

export const TRANSACTION_STATUSES = Object.keys(TRANSACTION_MOVES);

export function canMoveTransaction(from: string, to: string): boolean {
  return (TRANSACTION_MOVES[from] ?? []).includes(to);
}

/** Timestamp field set when a transaction reaches the status. */
export const TRANSACTION_STATUS_AT: Readonly<Record<string, string>> = {
  approved: 'approved_at',
  declined: 'declined_at',
  canceled: 'canceled_at',
  refunded: 'refunded_at',
  transferred: 'transferred_at',
};

export const MODES = ['mtn', 'moov', 'mtn_ci', 'moov_tg', 'mtn_open', 'moov_ci', 'togocel', 'orange_ci', 'wave_ci'] as const;

/** Mode used by a payout started without one. */
export const DEFAULT_PAYOUT_MODE = 'mtn_open';

/** Maximum payouts in one `PUT /v1/payouts/start`. */
export const MAX_START_BATCH = 100;
