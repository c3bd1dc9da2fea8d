/**
 * Every endpoint the gateway calls, declared once, one line each (docs/architecture.md, "Where
 * things are"). Answers are read as `one`, `byId` (must be the object asked for), `many` (all or
 * nothing), `list` (a bad item an error in its place) or `page` (with `meta`; applied.ts).
 */
import { resourceShape, type ResourceShape } from './decode.js';
import {
  accountModel,
  currencyModel,
  customerModel,
  eventModel,
  logModel,
  paymentIntentModel,
  payoutModel,
  transactionModel,
  transactionTokenModel,
  webhookModel,
} from './models.js';
import type {
  CustomerCreateParams,
  CustomerSearchParams,
  EventListParams,
  Id,
  ListParams,
  PayoutCreateParams,
  PayoutStartItem,
  PayoutUpdateParams,
  SearchParams,
  TransactionCreateParams,
  TransactionSendParams,
  TransactionUpdateParams,
} from './params.js';
import type { HttpMethod } from './transport.js';
import * as wire from './wire.js';

export type AnswerKind = 'one' | 'byId' | 'many' | 'list' | 'page';

export interface WireRequest {
  /** Checked before any I/O (operation-scope.ts, buildUrl). */
  path?: Record<string, unknown>;
  query?: wire.Query;
  body?: unknown;
  /** Checked like path ids before any I/O. */
  bodyIds?: Record<string, unknown>;
  /** A page read: the page asked for, which the answer must show it served (applied.ts). */
  requested?: ListParams;
}

export interface Endpoint<A extends unknown[] = never[], T = unknown, K extends AnswerKind = AnswerKind> {
  method: HttpMethod;
  pattern: string;
  /** Low-cardinality label of errors, metrics and breakers. */
  route: string;
  shape: ResourceShape<T>;
  kind: K;
  /** The spec defines it; a 404 or 405 on the others may mean the upstream lacks the route (spec.ts). */
  spec: boolean;
  /** No default values: its declared `length` says where the call options stand. */
  build: (...args: A) => WireRequest;
}

const SPEC = true;
const BEYOND = false;

function endpoint<A extends unknown[], T, K extends AnswerKind>(
  route: `${HttpMethod} /${string}`,
  shape: ResourceShape<T>,
  kind: K,
  spec: boolean,
  build: (...args: A) => WireRequest,
): Endpoint<A, T, K> {
  const [method, pattern] = route.split(' ') as [HttpMethod, string];
  return { method, pattern, route, shape, kind, spec, build };
}

const transaction = resourceShape('transaction', 'transactions', transactionModel);
const token = resourceShape('token', 'tokens', transactionTokenModel);
const paymentIntent = resourceShape('payment_intent', 'payment_intents', paymentIntentModel);
const payout = resourceShape('payout', 'payouts', payoutModel);
const customer = resourceShape('customer', 'customers', customerModel);
const currency = resourceShape('currency', 'currencies', currencyModel);
const webhook = resourceShape('webhook', 'webhooks', webhookModel);
const event = resourceShape('event', 'events', eventModel);
const log = resourceShape('log', 'logs', logModel);
const account = resourceShape('account', 'accounts', accountModel);

const nothing = (): WireRequest => ({});
const byId = (id: Id): WireRequest => ({ path: { id } });
const page = (params?: ListParams): WireRequest => ({ query: wire.pageQuery(params), requested: params ?? {} });
const paymentSearch = (params?: SearchParams): WireRequest => ({ query: wire.paymentSearchQuery(params), requested: params ?? {} });
const customerRef = (params: { customer?: { id?: Id | undefined } | undefined }) => ({ 'customer.id': params.customer?.id });

export const ENDPOINTS = {
  transactions: {
    retrieve: endpoint('GET /v1/transactions/:id', transaction, 'byId', SPEC, byId),
    list: endpoint('GET /v1/transactions', transaction, 'page', BEYOND, page),
    search: endpoint('GET /v1/transactions/search', transaction, 'page', BEYOND, paymentSearch),
    create: endpoint('POST /v1/transactions', transaction, 'one', BEYOND, (params: TransactionCreateParams) => ({ body: wire.transactionCreateBody(params), bodyIds: customerRef(params) })),
    update: endpoint('PUT /v1/transactions/:id', transaction, 'one', SPEC, (id: Id, params: TransactionUpdateParams) => ({ path: { id }, body: wire.transactionUpdateBody(params) })),
    createToken: endpoint('POST /v1/transactions/:id/token', token, 'one', BEYOND, byId),
    /** Pushes the payment request to the payer's phone (`mode`: the operator, docs/upstream.md). */
    send: endpoint('POST /v1/transactions/:mode', paymentIntent, 'many', SPEC, (mode: string, params: TransactionSendParams) => ({ path: { mode }, body: wire.transactionSendBody(params) })),
  },
  payouts: {
    retrieve: endpoint('GET /v1/payouts/:id', payout, 'byId', SPEC, byId),
    search: endpoint('GET /v1/payouts/search', payout, 'page', SPEC, paymentSearch),
    create: endpoint('POST /v1/payouts', payout, 'one', SPEC, (params: PayoutCreateParams) => ({ body: wire.payoutBody(params), bodyIds: customerRef(params) })),
    update: endpoint('PUT /v1/payouts/:id', payout, 'one', SPEC, (id: Id, params: PayoutUpdateParams) => ({ path: { id }, body: wire.payoutBody(params), bodyIds: customerRef(params) })),
    start: endpoint('PUT /v1/payouts/start', payout, 'many', SPEC, (items: PayoutStartItem[]) => ({ body: wire.payoutStartBody(items), bodyIds: Object.fromEntries(items.map((item, i) => [`payouts[${i}].id`, item.id])) })),
  },
  customers: {
    retrieve: endpoint('GET /v1/customers/:id', customer, 'byId', SPEC, byId),
    search: endpoint('GET /v1/customers/search', customer, 'page', SPEC, (params?: CustomerSearchParams) => ({ query: wire.customerSearchQuery(params), requested: params ?? {} })),
    create: endpoint('POST /v1/customers', customer, 'one', SPEC, (params: CustomerCreateParams) => ({ body: wire.customerBody(params) })),
  },
  currencies: {
    /** The spec answers an array of one. */
    retrieve: endpoint('GET /v1/currencies/:id', currency, 'byId', SPEC, byId),
    /** Needed only for lookups by ISO code and the whole list. */
    list: endpoint('GET /v1/currencies', currency, 'list', BEYOND, nothing),
  },
  webhooks: {
    list: endpoint('GET /v1/webhooks', webhook, 'list', SPEC, nothing),
    retrieve: endpoint('GET /v1/webhooks/:id', webhook, 'byId', SPEC, byId),
  },
  events: {
    retrieve: endpoint('GET /v1/events/:id', event, 'byId', SPEC, byId),
    list: endpoint('GET /v1/events', event, 'page', BEYOND, (params?: EventListParams) => ({ query: wire.eventListQuery(params), requested: params ?? {} })),
  },
  logs: {
    retrieve: endpoint('GET /v1/logs/:id', log, 'byId', SPEC, byId),
    list: endpoint('GET /v1/logs', log, 'page', BEYOND, page),
  },
  accounts: {
    /** The caller's own account; seen both as `{"v1/account": {...}}` and as a list of one. */
    current: endpoint('GET /v1/accounts', account, 'one', BEYOND, nothing),
  },
};

export const ALL_ENDPOINTS: readonly Endpoint[] = Object.values(ENDPOINTS).flatMap((verbs) => Object.values(verbs) as Endpoint[]);
