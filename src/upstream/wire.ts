/**
 * camelCase parameters to the wire's snake_case; `undefined` fields are dropped, so a partial
 * update sends only what was given.
 */
import type {
  CustomerCreateParams,
  CustomerRefParams,
  CustomerSearchParams,
  EventListParams,
  ListParams,
  PayoutCreateParams,
  PayoutStartItem,
  PhoneNumberParams,
  SearchParams,
  TransactionCreateParams,
  TransactionSendParams,
  TransactionUpdateParams,
} from './params.js';

export type QueryValue = string | number | undefined;
export type Query = Record<string, QueryValue>;

export function pageQuery(params: ListParams = {}): Query {
  return { page: params.page, per_page: params.perPage };
}

function searchQuery(params: ListParams & { createdAfter?: string | undefined; createdBefore?: string | undefined }, filters: Query): Query {
  const query: Query = pageQuery(params);
  const all = { ...filters, created_after: params.createdAfter, created_before: params.createdBefore };
  for (const [field, value] of Object.entries(all)) query[`filters[${field}]`] = value;
  return query;
}

export function paymentSearchQuery(params: SearchParams = {}): Query {
  return searchQuery(params, { status: params.status, customer_id: params.customerId });
}

export function customerSearchQuery(params: CustomerSearchParams = {}): Query {
  return searchQuery(params, { email: params.email, q: params.query });
}

export function eventListQuery(params: EventListParams = {}): Query {
  return { ...pageQuery(params), 'filters[type]': params.type, 'filters[object_id]': params.objectId };
}

function phoneNumberBody(phone: PhoneNumberParams | undefined) {
  return phone === undefined ? undefined : { number: phone.number, country: phone.country };
}

/** An existing customer is referenced by id alone; otherwise the upstream creates one from the details. */
function customerRefBody(ref: CustomerRefParams | undefined) {
  if (ref === undefined) return undefined;
  if (ref.id !== undefined) return { id: ref.id };
  return { firstname: ref.firstname, lastname: ref.lastname, email: ref.email, phone_number: phoneNumberBody(ref.phoneNumber) };
}

function currencyBody(iso: string | undefined) {
  return iso === undefined ? undefined : { iso };
}

export function transactionCreateBody(params: TransactionCreateParams) {
  return {
    amount: params.amount,
    description: params.description,
    callback_url: params.callbackUrl,
    currency: currencyBody(params.currencyIso),
    customer: customerRefBody(params.customer),
    mode: params.mode,
    merchant_reference: params.merchantReference,
    custom_metadata: params.customMetadata,
  };
}

export function transactionUpdateBody(params: TransactionUpdateParams) {
  return { description: params.description, amount: params.amount, callback_url: params.callbackUrl, status: params.status };
}

export function transactionSendBody(params: TransactionSendParams) {
  return { token: params.token, phone_number: phoneNumberBody(params.phoneNumber) };
}

export function payoutBody(params: Partial<PayoutCreateParams>) {
  return {
    amount: params.amount,
    currency: currencyBody(params.currencyIso),
    customer: customerRefBody(params.customer),
    mode: params.mode,
    merchant_reference: params.merchantReference,
    custom_metadata: params.customMetadata,
  };
}

export function payoutStartBody(items: PayoutStartItem[]) {
  // The spec shows a bare array; the client libraries send `{"payouts": [...]}` (docs/upstream.md, Operations).
  return {
    payouts: items.map((item) => ({ id: item.id, scheduled_at: item.scheduledAt, phone_number: phoneNumberBody(item.phoneNumber) })),
  };
}

export function customerBody(params: Partial<CustomerCreateParams>) {
  return { firstname: params.firstname, lastname: params.lastname, email: params.email, phone_number: phoneNumberBody(params.phoneNumber) };
}
