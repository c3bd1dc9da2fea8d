/**
 * GraphQL inputs -> upstream parameters, shared by the domains that take
 * the same input types (customer references, phone numbers, filters).
 */
import type {
  CustomerRefInput,
  DateTimeRange,
  PhoneNumberInput,
} from '../__generated__/resolvers-types.js';
import { badUserInput } from '../errors.js';
import type { CustomerRefParams, PhoneNumberParams, SearchParams } from '../upstream/index.js';
import { customerRefProblem, InputRule, statusFilter } from '../payments/rules.js';
import { isoString, toOptionalUpstreamId, type Check } from './support.js';

/** An optional GraphQL input: absent or explicit null. */
type InputMaybe<T> = T | null | undefined;

/** The rules of a phone number input at `path`: its country must be a country code. */
export function phoneChecks(input: InputMaybe<PhoneNumberInput>, path: string[]): Check[] {
  if (!input) return [];
  return [[InputRule.country.test(input.country), [...path, 'country'], InputRule.country.message]];
}

/** The rule of custom metadata at `path`: no deeper than the gateway reads back (upstream/nesting.ts). */
export function metadataCheck(metadata: unknown, path: string[]): Check {
  return [metadata === null || metadata === undefined || InputRule.metadata.test(metadata), path, InputRule.metadata.message];
}

/** The rules of a customer reference at `path`: an id or details, not both; a real e-mail; a phone's country. */
export function customerRefChecks(input: InputMaybe<CustomerRefInput>, path: string[]): Check[] {
  if (!input) return [];
  const ambiguity = customerRefProblem(input);
  return [
    [ambiguity === null, path, ambiguity ?? ''],
    [!input.email || InputRule.email.test(input.email), [...path, 'email'], InputRule.email.message],
    ...phoneChecks(input.phoneNumber, [...path, 'phoneNumber']),
  ];
}

/**
 * Renames the upstream's `amount` to the field the caller used: `amountDecimal`,
 * or the deprecated `amount` when that is what was sent.
 */
export function amountField(input: { amount?: unknown; amountDecimal?: unknown }): (parts: string[]) => string[] {
  const usedFloat = input.amount !== null && input.amount !== undefined && (input.amountDecimal === null || input.amountDecimal === undefined);
  return (parts) => (parts[0] === 'amount' && !usedFloat ? ['amountDecimal', ...parts.slice(1)] : parts);
}

/** The rule of an optional URL input at `path`. */
export function urlCheck(url: InputMaybe<string>, path: string[]): Check {
  return [url === null || url === undefined || InputRule.url.test(url), path, InputRule.url.message];
}

export function phoneNumber(input: InputMaybe<PhoneNumberInput>): PhoneNumberParams | undefined {
  if (!input) return undefined;
  return { number: input.number.trim(), country: input.country.toLowerCase() };
}

/** A customer by id, or the fields of a new one (docs/upstream.md, Operations). */
export function customerRef(input: InputMaybe<CustomerRefInput>): CustomerRefParams | undefined {
  if (!input) return undefined;
  if (input.id) return { id: toOptionalUpstreamId(input.id, 'customer.id') };
  return {
    firstname: input.firstname ?? undefined,
    lastname: input.lastname ?? undefined,
    email: input.email ?? undefined,
    phoneNumber: phoneNumber(input.phoneNumber),
  };
}

export function createdRange(range: InputMaybe<DateTimeRange>): Pick<SearchParams, 'createdAfter' | 'createdBefore'> {
  return { createdAfter: isoString(range?.from), createdBefore: isoString(range?.to) };
}

type TransactionSearchFilter = Omit<SearchParams, 'page' | 'perPage'>;

/** Transaction and payout filters share a shape: status, customer, created-at range. */
export function searchFilter(
  filter: InputMaybe<{ status?: InputMaybe<string>; customerId?: InputMaybe<string>; createdAt?: InputMaybe<DateTimeRange> }>,
): TransactionSearchFilter {
  if (!filter) return {};
  const status = statusFilter(filter.status);
  if (!status.ok) throw badUserInput(status.message, 'filter.status');
  return {
    status: status.value,
    customerId: toOptionalUpstreamId(filter.customerId, 'filter.customerId'),
    ...createdRange(filter.createdAt),
  };
}
