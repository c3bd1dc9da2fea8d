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

type InputMaybe<T> = T | null | undefined;

export function phoneChecks(input: InputMaybe<PhoneNumberInput>, path: string[]): Check[] {
  if (!input) return [];
  return [[InputRule.country.test(input.country), [...path, 'country'], InputRule.country.message]];
}

/** No deeper than the gateway reads back (upstream/nesting.ts). */
export function metadataCheck(metadata: unknown, path: string[]): Check {
  return [metadata === null || metadata === undefined || InputRule.metadata.test(metadata), path, InputRule.metadata.message];
}

export function customerRefChecks(input: InputMaybe<CustomerRefInput>, path: string[]): Check[] {
  if (!input) return [];
  const ambiguity = customerRefProblem(input);
  return [
    [ambiguity === null, path, ambiguity ?? ''],
    [!input.email || InputRule.email.test(input.email), [...path, 'email'], InputRule.email.message],
    ...phoneChecks(input.phoneNumber, [...path, 'phoneNumber']),
  ];
}

/** The upstream's `amount` is named as the caller sent it: `amountDecimal` or the deprecated `amount`. */
export function amountField(input: { amount?: unknown; amountDecimal?: unknown }): (parts: string[]) => string[] {
  const usedFloat = input.amount !== null && input.amount !== undefined && (input.amountDecimal === null || input.amountDecimal === undefined);
  return (parts) => (parts[0] === 'amount' && !usedFloat ? ['amountDecimal', ...parts.slice(1)] : parts);
}

export function urlCheck(url: InputMaybe<string>, path: string[]): Check {
  return [url === null || url === undefined || InputRule.url.test(url), path, InputRule.url.message];
}

export function phoneNumber(input: InputMaybe<PhoneNumberInput>): PhoneNumberParams | undefined {
  if (!input) return undefined;
  return { number: input.number.trim(), country: input.country.toLowerCase() };
}

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
