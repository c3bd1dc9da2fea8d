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
import type { CustomerRefParams, PhoneNumberParams, SearchParams } from '../upstream/api.js';
import { statusFilter } from '../payments/rules.js';
import { isoString, toOptionalUpstreamId } from './support.js';

/** An optional GraphQL input: absent or explicit null. */
type InputMaybe<T> = T | null | undefined;

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

export type TransactionSearchFilter = Omit<SearchParams, 'page' | 'perPage'>;

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
