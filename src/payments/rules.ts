/**
 * The payment rules the gateway applies, in one place: how upstream statuses
 * map to the schema's enums, which statuses count as paid or final, what may
 * be filtered on, and the input rules checked before any upstream call.
 * Status lists come from the generated enums (schema/*.graphql), never copied
 * by hand; test/unit/payments/rules.test.ts walks every value.
 */
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

/** The values of a generated enum the upstream can send (everything but `UNKNOWN`). */
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

/**
 * Upstream status string -> GraphQL enum value. The upstream publishes no
 * transition table and may add values (docs/upstream.md, Statuses): a value
 * we do not know is `UNKNOWN` and logged, never a crash.
 */
export function statusFromUpstream<T extends keyof StatusOf>(
  type: T,
  value: string | null | undefined,
  // The operation's context: its logger is built only when something logs (src/context.ts).
  where: { readonly logger: Pick<Logger, 'warn'> },
): StatusOf[T] {
  const upper = (value ?? '').toUpperCase();
  if (KNOWN[type].has(upper)) return upper as StatusOf[T];
  where.logger.warn({ what: `${type}.status`, value }, 'unknown upstream status mapped to UNKNOWN');
  return 'UNKNOWN' as StatusOf[T];
}

/** Paid = approved, transferred, refunded or a partial refund (docs/upstream.md, Statuses). */
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

/**
 * Statuses after which the upstream never changes the object again. An
 * approved or transferred transaction may still be refunded, and a partial
 * refund may grow, so only these are final.
 */
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

/**
 * The final statuses as the upstream spells them (lower case) and as the enums do (upper case,
 * what isFinalTransaction and isFinalPayout compare), for a caller that decides once and tests
 * many times (the entity cache's TTL policy).
 */
export function finalStatuses(): { transaction: ReadonlySet<string>; payout: ReadonlySet<string> } {
  const spelled = (statuses: ReadonlySet<string>) => new Set([...statuses].flatMap((s) => [s, s.toLowerCase()]));
  return { transaction: spelled(FINAL_TRANSACTION), payout: spelled(FINAL_PAYOUT) };
}

/**
 * A status filter -> the upstream's lowercase value, or a refusal: `UNKNOWN`
 * stands for values the gateway cannot name, so nothing upstream matches it.
 */
export function statusFilter(status: string | null | undefined): { ok: true; value: string | undefined } | { ok: false; message: string } {
  if (status === null || status === undefined) return { ok: true, value: undefined };
  if (status === 'UNKNOWN') return { ok: false, message: '`UNKNOWN` is not a status one can filter on.' };
  return { ok: true, value: status.toLowerCase() };
}

/** ISO 4217 alphabetic code, any case on input (docs/upstream.md, Money). */
export const CURRENCY_ISO = /^[A-Za-z]{3}$/;
/** A payment mode: the URL segment the upstream client accepts for the send step. */
export const MODE = MODE_PATTERN;

/**
 * Whether graphql-scalars' own parser accepts the value. The `EmailAddress`,
 * `URL` and `CountryCode` inputs take any string (docs/graphql-contract.md,
 * Mutations) and are judged here, by the same grammar the scalars used to
 * apply, so a bad value is a user error on its field, not a refused request.
 */
function scalarAccepts(scalar: GraphQLScalarType, value: string): boolean {
  try {
    scalar.parseValue(value);
    return true;
  } catch {
    return false;
  }
}

/** Longest token the gateway forwards: far above the tokens the API family issues, and a bound on what a caller makes it send. */
const MAX_TOKEN_CHARS = 200;

export const InputRule = {
  amount: { test: (amount: number) => amount > 0, message: 'Amount must be greater than 0.' },
  currencyIso: { test: (iso: string) => CURRENCY_ISO.test(iso), message: 'Currency must be an ISO 4217 code such as XOF.' },
  mode: { test: (mode: string) => MODE.test(mode), message: 'Mode must be a mode name such as mtn or moov.' },
  email: { test: (email: string) => scalarAccepts(EmailAddressResolver, email), message: 'E-mail must be an address such as ama@example.com.' },
  url: { test: (url: string) => scalarAccepts(URLResolver, url), message: 'URL must be absolute, such as https://shop.example.com/callback.' },
  country: { test: (code: string) => scalarAccepts(CountryCodeResolver, code), message: 'Country must be an ISO 3166-1 alpha-2 code such as BJ.' },
  /**
   * An upstream item nested deeper than MAX_NESTING is refused when read back (upstream/nesting.ts).
   * Metadata sits one level down in its transaction or payout, two in an event about it (the
   * events API's items and the webhooks): two levels are kept for those.
   */
  metadata: {
    test: (metadata: unknown) => nestsWithin(metadata, MAX_NESTING - 2),
    message: `Custom metadata must nest at most ${MAX_NESTING - 2} levels deep.`,
  },
  token: {
    test: (token: string) => token.trim() !== '' && token.length <= MAX_TOKEN_CHARS,
    message: `Token must be the token of the transaction (1 to ${MAX_TOKEN_CHARS} characters), as createTransactionToken returns it.`,
  },
} as const;

/** The fields of a customer reference (`CustomerRefInput`): an id, or the details of a new customer. */
export interface CustomerRefFields {
  id?: string | null;
  firstname?: string | null;
  lastname?: string | null;
  email?: string | null;
  phoneNumber?: unknown;
}

/**
 * A customer reference names an existing customer or describes a new one,
 * never both: the upstream would silently keep one of them (the gateway used
 * to drop the details), so a form could believe it changed a name it did not.
 */
export function customerRefProblem(ref: CustomerRefFields): string | null {
  const hasId = ref.id !== null && ref.id !== undefined;
  const details = (['firstname', 'lastname', 'email', 'phoneNumber'] as const).filter((k) => ref[k] !== null && ref[k] !== undefined);
  if (hasId && details.length > 0) {
    return `Give either \`id\` of an existing customer or the details of a new one, not both (got \`id\` and ${details.map((d) => `\`${d}\``).join(', ')}).`;
  }
  return null;
}

/**
 * Decimals an amount in this currency may have: ISO 4217's minor unit as
 * Node's Intl data knows it (0 for XOF and JPY, 2 for USD, 3 for KWD).
 * A code Intl does not know gets 2, its default; the upstream judges the code.
 */
export function currencyDecimals(iso: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: iso }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** Why an input amount is refused, or `null`: it must be above zero and fit the currency's decimals. */
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

/**
 * What a requested state change means given the current status: `apply` it
 * upstream, `already` happened (answer the object, act no more), or a
 * `conflict` (refused with INVALID_STATE, nothing sent).
 */
export type Transition = 'apply' | 'already' | 'conflict';

/** Cancel: only a pending transaction can be canceled. */
export function cancelTransition(upstreamStatus: string): Transition {
  const status = upstreamStatus.toUpperCase();
  if (status === 'PENDING') return 'apply';
  if (status === 'CANCELED') return 'already';
  return 'conflict';
}

/** A payout past these has been started; starting it again changes nothing. */
const STARTED_PAYOUT: ReadonlySet<Known<typeof PayoutStatus>> = new Set(['SCHEDULED', 'STARTED', 'PROCESSING', 'SENT'] as const);

/** Start: pending starts; a started one is left as it is; a failed one (or a status we do not know) cannot start again. */
export function startTransition(upstreamStatus: string): Transition {
  const status = upstreamStatus.toUpperCase();
  if (status === 'PENDING') return 'apply';
  if (STARTED_PAYOUT.has(status as Known<typeof PayoutStatus>)) return 'already';
  return 'conflict';
}
