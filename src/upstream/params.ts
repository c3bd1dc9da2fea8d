/**
 * What callers pass to the verbs (camelCase; endpoints.ts makes the wire's snake_case) and get
 * back besides models: pages, list items and call options.
 */
import type { Decimal } from './decimal.js';
import type { UpstreamInvalidResponseError } from './errors.js';

export type Id = number;

export interface PageMeta {
  currentPage: number;
  perPage: number;
  totalPages: number | null;
  totalCount: number | null;
  nextPage: number | null;
}

/** As in a DataLoader's answer, an item that alone failed validation is its error, in its place. */
export type ListItem<T> = T | UpstreamInvalidResponseError;

export interface Page<T> {
  items: ListItem<T>[];
  /** Null when the upstream sent no `meta` (plain responses, currencies). */
  meta: PageMeta | null;
}

export interface ListParams {
  page?: number;
  perPage?: number;
}

export interface SearchParams extends ListParams {
  status?: string;
  customerId?: Id;
  /** ISO 8601 bounds on `created_at`, inclusive. */
  createdAfter?: string;
  createdBefore?: string;
}

export interface CustomerSearchParams extends ListParams {
  email?: string;
  /** Free text over first name, last name and e-mail. */
  query?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export interface EventListParams extends ListParams {
  type?: string;
  objectId?: Id;
}

export interface PhoneNumberParams {
  number: string;
  /** ISO 3166-1 alpha-2, either case. */
  country: string;
}

export interface CustomerRefParams {
  id?: Id;
  firstname?: string;
  lastname?: string;
  email?: string;
  phoneNumber?: PhoneNumberParams;
}

export interface TransactionCreateParams {
  /** Sent as a JSON number token of these digits, never through a JS number. */
  amount: Decimal;
  currencyIso: string;
  description?: string;
  callbackUrl?: string;
  customer?: CustomerRefParams;
  mode?: string;
  merchantReference?: string;
  customMetadata?: Record<string, unknown>;
}

export interface TransactionUpdateParams {
  description?: string;
  amount?: Decimal;
  callbackUrl?: string;
  status?: string;
}

export interface TransactionSendParams {
  token: string;
  phoneNumber?: PhoneNumberParams;
}

export interface PayoutCreateParams {
  amount: Decimal;
  currencyIso: string;
  customer?: CustomerRefParams;
  mode?: string;
  merchantReference?: string;
  customMetadata?: Record<string, unknown>;
}

export type PayoutUpdateParams = Partial<PayoutCreateParams>;

export interface PayoutStartItem {
  id: Id;
  /** ISO 8601; a future time schedules the payout. */
  scheduledAt?: string;
  phoneNumber?: PhoneNumberParams;
}

export interface CustomerCreateParams {
  firstname: string;
  lastname: string;
  email: string;
  phoneNumber?: PhoneNumberParams;
}

export interface CallOptions {
  /** Forwarded as `Idempotency-Key` on writes. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}
