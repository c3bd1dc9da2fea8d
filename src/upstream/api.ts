/**
 * The typed surface of the payments REST API, in the style of stripe-node:
 * verbs per resource and parameter types named `<Resource><Verb>Params`.
 *
 * Everything the gateway knows about the REST API goes through this interface;
 * its implementation in this folder (http.ts, decode.ts, errors.ts,
 * resources/, assembled by client.ts) is the only place that builds URLs,
 * unwraps envelopes and decodes errors. Parameters are camelCase domain
 * values; the client turns them into the wire's snake_case.
 *
 * Failures are thrown as `UpstreamError` subclasses (errors.ts). A read of an
 * unknown id throws `UpstreamNotFoundError`; loaders turn that into `null`.
 */
import type {
  AccountModel,
  CurrencyModel,
  CustomerModel,
  EventModel,
  LogModel,
  PaymentIntentModel,
  PayoutModel,
  TransactionModel,
  TransactionTokenModel,
  WebhookModel,
} from './models.js';
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

/**
 * One item of a list read: the decoded object, or the error that this item
 * alone failed validation with (docs/upstream.md, Response shapes). As in a
 * DataLoader's answer, the error stands in the item's place.
 */
export type ListItem<T> = T | UpstreamInvalidResponseError;

export interface Page<T> {
  items: ListItem<T>[];
  /** Null when the upstream sent no `meta` (plain responses, currencies). */
  meta: PageMeta | null;
}

export interface ListParams {
  /** 1-based page number. */
  page?: number;
  perPage?: number;
}

/** Filters sent as `filters[<field>]=value` (docs/upstream.md, Operations). */
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


/** Options every call accepts. */
export interface CallOptions {
  /** Forwarded as `Idempotency-Key` on writes. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface PaymentsApi {
  transactions: {
    retrieve(id: Id, opts?: CallOptions): Promise<TransactionModel>;
    list(params?: ListParams, opts?: CallOptions): Promise<Page<TransactionModel>>;
    search(params?: SearchParams, opts?: CallOptions): Promise<Page<TransactionModel>>;
    create(params: TransactionCreateParams, opts?: CallOptions): Promise<TransactionModel>;
    update(id: Id, params: TransactionUpdateParams, opts?: CallOptions): Promise<TransactionModel>;
    /** `POST /v1/transactions/{id}/token`: a one-time token and a hosted-checkout url. */
    createToken(id: Id, opts?: CallOptions): Promise<TransactionTokenModel>;
    /** `POST /v1/transactions/{mode}`: push the payment request to the payer's phone. */
    send(mode: string, params: TransactionSendParams, opts?: CallOptions): Promise<PaymentIntentModel[]>;
  };
  payouts: {
    retrieve(id: Id, opts?: CallOptions): Promise<PayoutModel>;
    search(params?: SearchParams, opts?: CallOptions): Promise<Page<PayoutModel>>;
    create(params: PayoutCreateParams, opts?: CallOptions): Promise<PayoutModel>;
    update(id: Id, params: PayoutUpdateParams, opts?: CallOptions): Promise<PayoutModel>;
    /** `PUT /v1/payouts/start`: several payouts in one request. */
    start(items: PayoutStartItem[], opts?: CallOptions): Promise<PayoutModel[]>;
  };
  customers: {
    retrieve(id: Id, opts?: CallOptions): Promise<CustomerModel>;
    search(params?: CustomerSearchParams, opts?: CallOptions): Promise<Page<CustomerModel>>;
    create(params: CustomerCreateParams, opts?: CallOptions): Promise<CustomerModel>;
  };
  currencies: {
    /** `GET /v1/currencies/{id}` (the spec's endpoint 13, an array of one). */
    retrieve(id: Id, opts?: CallOptions): Promise<CurrencyModel>;
    /** `GET /v1/currencies`: beyond the spec; needed only for lookups by ISO code and the whole list. */
    list(opts?: CallOptions): Promise<ListItem<CurrencyModel>[]>;
  };
  webhooks: {
    list(opts?: CallOptions): Promise<ListItem<WebhookModel>[]>;
    retrieve(id: Id, opts?: CallOptions): Promise<WebhookModel>;
  };
  events: {
    retrieve(id: Id, opts?: CallOptions): Promise<EventModel>;
    list(params?: EventListParams, opts?: CallOptions): Promise<Page<EventModel>>;
  };
  logs: {
    retrieve(id: Id, opts?: CallOptions): Promise<LogModel>;
    list(params?: ListParams, opts?: CallOptions): Promise<Page<LogModel>>;
  };
  accounts: {
    /** `GET /v1/accounts`: the caller's own account. */
    current(opts?: CallOptions): Promise<AccountModel>;
  };
}
