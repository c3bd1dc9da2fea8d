/** The payment rules in one place; status lists come from the generated enums, never copied by hand. */
import {
  PaymentIntentStatus,
  PayoutStatus,
  TransactionStatus,
} from '../__generated__/schema-enums.js';
import type { GraphQLScalarType } from 'graphql';
import { CountryCodeResolver, EmailAddressResolver, URLResolver } from 'graphql-scalars';
import type { Logger } from '../logger.js';
import type { Decimal } from '../upstream/index.js';
import { MODE_PATTERN } from '../upstream/index.js';
import { MAX_NESTING, nestsWithin } from '../upstream/index.js';

export { PaymentIntentStatus, PayoutStatus, TransactionStatus };

type Known<E extends Record<string, string>> = Exclude<E[keyof E], 'UNKNOWN'>;

/** Everything but `UNKNOWN`. */
function knownValues<E extends Record<string, string>>(enumObject: E): ReadonlySet<string> {
  return new Set(Object.values(enumObject).filter((v) => v !== 'UNKNOWN'));
}

const KNOWN = {
  Transaction: knownValues(TransactionStatus),
  Payout: knownValues(PayoutStatus),
  PaymentIntent: knownValues(PaymentIntentStatus),
} as const;

type StatusOf = {
  Transaction: TransactionStatus;
  Payout: PayoutStatus;
  PaymentIntent: PaymentIntentStatus;
};

/** The upstream may add statuses (docs/upstream.md, Statuses): an unknown one is `UNKNOWN` and logged. */
export function statusFromUpstream<T extends keyof StatusOf>(
  type: T,
  value: string | null | undefined,
  // The context, not its logger: the logger is built only when something logs.
  where: { readonly logger: Pick<Logger, 'warn'> },
): StatusOf[T] {
  const upper = (value ?? '').toUpperCase();
  if (KNOWN[type].has(upper)) return upper as StatusOf[T];
  where.logger.warn({ what: `${type}.status`, value }, 'unknown upstream status mapped to UNKNOWN');
  return 'UNKNOWN' as StatusOf[T];
}

const PAID_TRANSACTION: ReadonlySet<Known<typeof TransactionStatus>> = new Set([
  'APPROVED',
  'TRANSFERRED',
  'REFUNDED',
  'APPROVED_PARTIALLY_REFUNDED',
  'TRANSFERRED_PARTIALLY_REFUNDED',
] as const);

export function isPaid(upstreamStatus: string): boolean {
  return PAID_TRANSACTION.has(upstreamStatus.toUpperCase() as Known<typeof TransactionStatus>);
}

/** Never changed again; an approved or transferred one may still be refunded, so it is not final. */
const FINAL_TRANSACTION: ReadonlySet<Known<typeof TransactionStatus>> = new Set([
  'DECLINED',
  'CANCELED',
  'REFUNDED',
  'EXPIRED',
] as const);
const FINAL_PAYOUT: ReadonlySet<Known<typeof PayoutStatus>> = new Set(['SENT', 'FAILED'] as const);

export function isFinalTransaction(upstreamStatus: string): boolean {
  return FINAL_TRANSACTION.has(upstreamStatus.toUpperCase() as Known<typeof TransactionStatus>);
}

export function isFinalPayout(upstreamStatus: string): boolean {
  return FINAL_PAYOUT.has(upstreamStatus.toUpperCase() as Known<typeof PayoutStatus>);
}

/** The final statuses in both spellings, for a caller that decides once and tests many times (the entity cache). */
export function finalStatuses(): { transaction: ReadonlySet<string>; payout: ReadonlySet<string> } {
  const spelled = (statuses: ReadonlySet<string>) => new Set([...statuses].flatMap((s) => [s, s.toLowerCase()]));
  return { transaction: spelled(FINAL_TRANSACTION), payout: spelled(FINAL_PAYOUT) };
}

/** `UNKNOWN` stands for values the gateway cannot name, so nothing upstream matches it: refused. */
export function statusFilter(status: string | null | undefined): { ok: true; value: string | undefined } | { ok: false; message: string } {
  if (status === null || status === undefined) return { ok: true, value: undefined };
  if (status === 'UNKNOWN') return { ok: false, message: '`UNKNOWN` is not a status one can filter on.' };
  return { ok: true, value: status.toLowerCase() };
}

export const CURRENCY_ISO = /^[A-Za-z]{3}$/;
export const MODE = MODE_PATTERN;

/** Judged here by the scalar's own grammar, so a bad value is a user error on its field. */
function scalarAccepts(scalar: GraphQLScalarType, value: string): boolean {
  try {
    scalar.parseValue(value);
    return true;
  } catch {
    return false;
  }
}

/** Far above the tokens the API issues; bounds what a caller makes the gateway send. */
const MAX_TOKEN_CHARS = 200;

export const InputRule = {
  amount: { test: (amount: number) => amount > 0, message: 'Amount must be greater than 0.' },
  currencyIso: { test: (iso: string) => CURRENCY_ISO.test(iso), message: 'Currency must be an ISO 4217 code such as XOF.' },
  mode: { test: (mode: string) => MODE.test(mode), message: 'Mode must be a mode name such as mtn or moov.' },
  email: { test: (email: string) => scalarAccepts(EmailAddressResolver, email), message: 'E-mail must be an address such as ama@example.com.' },
  url: { test: (url: string) => scalarAccepts(URLResolver, url), message: 'URL must be absolute, such as https://shop.example.com/callback.' },
  country: { test: (code: string) => scalarAccepts(CountryCodeResolver, code), message: 'Country must be an ISO 3166-1 alpha-2 code such as BJ.' },
  // An event holds metadata two levels down, and a deeper item is refused when read back (upstream/nesting.ts).
  metadata: {
    test: (metadata: unknown) => nestsWithin(metadata, MAX_NESTING - 2),
    message: `Custom metadata must nest at most ${MAX_NESTING - 2} levels deep.`,
  },
  token: {
    test: (token: string) => token.trim() !== '' && token.length <= MAX_TOKEN_CHARS,
    message: `Token must be the token of the transaction (1 to ${MAX_TOKEN_CHARS} characters), as createTransactionToken returns it.`,
  },
} as const;

export interface CustomerRefFields {
  id?: string | null;
  firstname?: string | null;
  lastname?: string | null;
  email?: string | null;
  phoneNumber?: unknown;
}

/** Never both an id and details: the upstream would silently keep one of them. */
export function customerRefProblem(ref: CustomerRefFields): string | null {
  const hasId = ref.id !== null && ref.id !== undefined;
  const details = (['firstname', 'lastname', 'email', 'phoneNumber'] as const).filter((k) => ref[k] !== null && ref[k] !== undefined);
  if (hasId && details.length > 0) {
    return `Give either \`id\` of an existing customer or the details of a new one, not both (got \`id\` and ${details.map((d) => `\`${d}\``).join(', ')}).`;
  }
  return null;
}

/** ISO 4217's minor unit as Node's Intl knows it; an unknown code gets 2 and the upstream judges it. */
export function currencyDecimals(iso: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: iso }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

export function amountProblem(amount: Decimal, currencyIso: string | null): string | null {
  if (amount.sign <= 0) return InputRule.amount.message;
  if (currencyIso === null) return null;
  const decimals = currencyDecimals(currencyIso);
  if (amount.scale > decimals) {
    return decimals === 0
      ? `${currencyIso} has no minor unit: the amount must be a whole number.`
      : `${currencyIso} amounts have at most ${decimals} decimals.`;
  }
  return null;
}

/** `already`: answer the object, act no more; `conflict`: INVALID_STATE, nothing sent. */
export type Transition = 'apply' | 'already' | 'conflict';

export function cancelTransition(upstreamStatus: string): Transition {
  const status = upstreamStatus.toUpperCase();
  if (status === 'PENDING') return 'apply';
  if (status === 'CANCELED') return 'already';
  return 'conflict';
}

const STARTED_PAYOUT: ReadonlySet<Known<typeof PayoutStatus>> = new Set(['SCHEDULED', 'STARTED', 'PROCESSING', 'SENT'] as const);

/** A failed payout (or a status we do not know) cannot start again. */
export function startTransition(upstreamStatus: string): Transition {
  const status = upstreamStatus.toUpperCase();
  if (status === 'PENDING') return 'apply';
  if (STARTED_PAYOUT.has(status as Known<typeof PayoutStatus>)) return 'already';
  return 'conflict';
}
