/**
 * The `PaymentsApi` over HTTP: one shared got instance with keep-alive agents,
 * bound per caller to that caller's API key with `forKey`.
 *
 * Layers, top to bottom: resource verbs (thin: a route, a query or body, a
 * decoder) -> `request()` (headers, transport errors, status mapping) ->
 * `buildUrl()` (the one place a URL is built; validates ids before any I/O).
 */
import http from 'node:http';
import https from 'node:https';
import got, { RequestError, TimeoutError, type Got } from 'got';
import type {
  CallOptions,
  CustomerRefParams,
  CustomerSearchParams,
  ListParams,
  PaymentsApi,
  PhoneNumberParams,
  PayoutCreateParams,
  PayoutStartItem,
  SearchParams,
  TransactionCreateParams,
  WebhookCreateParams,
  CustomerCreateParams,
} from './api.js';
import {
  decodeErrorBody,
  decodeMany,
  decodeOne,
  decodePage,
  parseJsonBody,
  resourceShape,
  type ResourceShape,
} from './decode.js';
import {
  UpstreamAuthenticationError,
  UpstreamConflictError,
  UpstreamConnectionError,
  UpstreamError,
  UpstreamNotFoundError,
  UpstreamPermissionError,
  UpstreamRateLimitError,
  UpstreamServerError,
  UpstreamTimeoutError,
  UpstreamValidationError,
  type UpstreamErrorInit,
} from './errors.js';
import { DEFAULT_RESILIENCE, Resilience, type BreakerState, type ResilienceOptions } from './resilience.js';
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

export interface UpstreamClientOptions {
  /** e.g. `https://sandbox-api.example.com` (a path prefix is kept); paths start with `/v1`. */
  baseUrl: string;
  /** Whole-request time-out of one attempt, connection included. Default 10 s. */
  timeoutMs?: number;
  userAgent?: string;
  /** Retries, retry budget, breakers and bulkheads (resilience.ts); defaults in DEFAULT_RESILIENCE. */
  resilience?: ResilienceOptions;
}

/** What one GraphQL operation imposes on every upstream call it makes. */
export interface OperationScope {
  /** Epoch ms: no attempt starts, and no retry waits, past it; an attempt's time-out shrinks to fit. */
  deadlineAt?: number;
  /** Aborts every call of the operation (client gone, shutdown). */
  signal?: AbortSignal;
}

export interface UpstreamClient {
  /** The API as seen by one caller; cheap, no I/O: call it per request. */
  forKey(apiKey: string, scope?: OperationScope): PaymentsApi;
  /** Circuit breaker state per route called so far (for /readyz). */
  breakerStates(): Record<string, BreakerState>;
  /** Closes the pooled keep-alive sockets and stops the breakers' timers. */
  close(): void;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** `GET /v1/customers/:id`: the label errors carry, low-cardinality for metrics and logs. */
export function routeLabel(method: HttpMethod, pattern: string): string {
  return `${method} ${pattern}`;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
const SOURCE = 'payments-graphql-gateway';
/** Path segment of the send step (upstream.md: mtn, moov, mtn_ci, moov_tg, mtn_open). */
const MODE_PATTERN = /^[a-z0-9_]+$/;
/** Printable ASCII without spaces: anything else cannot travel in a header. */
const API_KEY_PATTERN = /^[\x21-\x7e]+$/;

type QueryValue = string | number | undefined;

interface Call {
  method: HttpMethod;
  /** Path with `:name` placeholders; also the route label. */
  pattern: string;
  path?: Record<string, unknown>;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Ids inside the body, by field name, checked like path ids before any I/O (absent ones skipped). */
  bodyIds?: Record<string, unknown>;
}

interface Received {
  text: string;
  /** Context for errors raised while decoding a 2xx body (no statusCode: the status was fine). */
  ctx: UpstreamErrorInit;
}

type Send = (call: Call, opts?: CallOptions) => Promise<Received>;

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const baseUrl = parseBaseUrl(options.baseUrl);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const agent = {
    http: new http.Agent({ keepAlive: true, maxSockets: 256 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 256 }),
  };
  const transport = got.extend({
    agent,
    responseType: 'text',
    throwHttpErrors: false,
    // got never retries: resilience.ts does, only for repeatable calls and within the deadline.
    retry: { limit: 0 },
    timeout: { request: timeoutMs },
    // A redirect is unexpected from a JSON API; never carry the key elsewhere.
    followRedirect: false,
    headers: {
      accept: 'application/json',
      'user-agent': options.userAgent ?? SOURCE,
      'x-version': 'v1',
      'x-source': SOURCE,
    },
  });

  const resilience = new Resilience(options.resilience ?? DEFAULT_RESILIENCE, timeoutMs);

  return {
    forKey: (apiKey, scope = {}) =>
      buildApi((call, opts) => request(transport, resilience, { baseUrl, apiKey, scope }, call, opts)),
    breakerStates: () => resilience.breakerStates(),
    close: () => {
      resilience.close();
      agent.http.destroy();
      agent.https.destroy();
    },
  };
}

interface RequestContext {
  baseUrl: URL;
  apiKey: string;
  scope: OperationScope;
}

async function request(transport: Got, resilience: Resilience, rc: RequestContext, call: Call, opts: CallOptions = {}): Promise<Received> {
  const route = routeLabel(call.method, call.pattern);
  const url = buildUrl(rc.baseUrl, call, route);
  for (const [field, id] of Object.entries(call.bodyIds ?? {})) {
    if (id !== undefined) requirePositiveInt(field, id, route);
  }
  if (!API_KEY_PATTERN.test(rc.apiKey)) throw new UpstreamAuthenticationError({ route });
  const signals = [opts.signal, rc.scope.signal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  signal?.throwIfAborted();

  // Safe to send twice: a read, or a write the upstream deduplicates by its key.
  const repeatable = call.method === 'GET' || opts.idempotencyKey !== undefined;
  return resilience.run(
    {
      route,
      repeatable,
      ...(rc.scope.deadlineAt === undefined ? {} : { deadlineAt: rc.scope.deadlineAt }),
      ...(signal === undefined ? {} : { signal }),
    },
    (timeoutMs) => attempt(transport, rc.apiKey, url, route, call, opts, signal, timeoutMs),
  );
}

async function attempt(
  transport: Got,
  apiKey: string,
  url: URL,
  route: string,
  call: Call,
  opts: CallOptions,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<Received> {
  let response;
  try {
    response = await transport(url, {
      method: call.method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey }),
      },
      timeout: { request: timeoutMs },
      ...(call.body === undefined ? {} : { json: call.body }),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    // A caller's abort is not an upstream failure: surface the caller's reason, as fetch does.
    if (signal?.aborted) throw signal.reason;
    throw transportError(error, route, timeoutMs);
  }

  const requestIdHeader = response.headers['x-request-id'];
  const requestId = typeof requestIdHeader === 'string' ? requestIdHeader : undefined;
  const ctx: UpstreamErrorInit = requestId === undefined ? { route } : { route, requestId };
  const status = response.statusCode;
  if (status >= 200 && status < 300) return { text: response.body, ctx };
  throw statusError(status, response.body, response.headers['retry-after'], { ...ctx, statusCode: status }, apiKey);
}

/** The one place a URL is built: validated path params, then the query. */
function buildUrl(baseUrl: URL, call: Call, route: string): URL {
  const path = call.pattern.replace(/:([a-zA-Z]+)/g, (_match, name: string) =>
    encodeURIComponent(pathSegment(name, call.path?.[name], route)),
  );
  const url = new URL(baseUrl.href.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(call.query ?? {})) {
    if (value === undefined) continue;
    if (typeof value === 'number') requirePositiveInt(key, value, route);
    url.searchParams.append(key, String(value));
  }
  return url;
}

function pathSegment(name: string, value: unknown, route: string): string {
  if (name === 'mode') {
    if (typeof value === 'string' && MODE_PATTERN.test(value)) return value;
    throw invalidParam('mode', 'must be lower-case letters, digits or underscores', route);
  }
  return String(requirePositiveInt(name, value, route));
}

function requirePositiveInt(field: string, value: unknown, route: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw invalidParam(field, 'must be a positive integer', route);
}

function invalidParam(field: string, message: string, route: string): UpstreamValidationError {
  return new UpstreamValidationError({ route, fieldErrors: { [field]: [message] } });
}

function transportError(error: unknown, route: string, timeoutMs: number): unknown {
  if (error instanceof TimeoutError) return new UpstreamTimeoutError({ route, timeoutMs });
  // got's errors carry the request options, Authorization included: keep only the system code.
  if (error instanceof RequestError) return new UpstreamConnectionError({ route, systemCode: error.code });
  return error;
}

function statusError(
  status: number,
  text: string,
  retryAfter: string | undefined,
  init: UpstreamErrorInit,
  apiKey: string,
): UpstreamError {
  if (status === 400 || status === 422) {
    const body = decodeErrorBody(text);
    const fieldErrors = Object.fromEntries(
      Object.entries(body.fieldErrors).map(([field, messages]) => [field, messages.map((m) => redact(m, apiKey))]),
    );
    return new UpstreamValidationError({
      ...init,
      fieldErrors,
      ...(body.message === undefined ? {} : { upstreamMessage: redact(body.message, apiKey) }),
    });
  }
  switch (status) {
    case 401:
      return new UpstreamAuthenticationError(init);
    case 403:
      return new UpstreamPermissionError(init);
    case 404:
      return new UpstreamNotFoundError(init);
    case 409:
      return new UpstreamConflictError(init);
    case 429: {
      const retryAfterSeconds = parseRetryAfter(retryAfter);
      return new UpstreamRateLimitError(retryAfterSeconds === undefined ? init : { ...init, retryAfterSeconds });
    }
  }
  if (status >= 500) return new UpstreamServerError(init);
  return new UpstreamError(`Upstream answered with unexpected status ${status} on ${init.route}`, 'unexpected_status', init);
}

/** `Retry-After` is either delta-seconds or an HTTP date (RFC 9110, 10.2.3). */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function redact(text: string, apiKey: string): string {
  return apiKey === '' ? text : text.split(apiKey).join('[redacted]');
}

function parseBaseUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Upstream baseUrl must be http or https, got ${url.protocol}`);
  }
  return url;
}

// ---------------------------------------------------------------------------
// Resources: wire names (envelope keys `v1/<name>`, `v1/<plural>`) and models.

const transaction = resourceShape('transaction', 'transactions', transactionModel);
const payout = resourceShape('payout', 'payouts', payoutModel);
const customer = resourceShape('customer', 'customers', customerModel);
const currency = resourceShape('currency', 'currencies', currencyModel);
const webhook = resourceShape('webhook', 'webhooks', webhookModel);
const event = resourceShape('event', 'events', eventModel);
const log = resourceShape('log', 'logs', logModel);
const account = resourceShape('account', 'accounts', accountModel);
const token = resourceShape('token', 'tokens', transactionTokenModel);
const paymentIntent = resourceShape('payment_intent', 'payment_intents', paymentIntentModel);

function buildApi(send: Send): PaymentsApi {
  const one = async <T>(shape: ResourceShape<T>, call: Call, opts?: CallOptions): Promise<T> => {
    const { text, ctx } = await send(call, opts);
    return decodeOne(parseJsonBody(text, shape.name, ctx), shape, ctx);
  };
  const many = async <T>(shape: ResourceShape<T>, call: Call, opts?: CallOptions): Promise<T[]> => {
    const { text, ctx } = await send(call, opts);
    return decodeMany(parseJsonBody(text, shape.plural, ctx), shape, ctx);
  };
  const page = async <T>(shape: ResourceShape<T>, call: Call, params: ListParams = {}, opts?: CallOptions) => {
    const { text, ctx } = await send(call, opts);
    return decodePage(parseJsonBody(text, shape.plural, ctx), shape, ctx, params);
  };

  return {
    transactions: {
      retrieve: (id, opts) => one(transaction, { method: 'GET', pattern: '/v1/transactions/:id', path: { id } }, opts),
      list: (params, opts) =>
        page(transaction, { method: 'GET', pattern: '/v1/transactions', query: pageQuery(params) }, params, opts),
      search: (params, opts) =>
        page(transaction, { method: 'GET', pattern: '/v1/transactions/search', query: searchQuery(params) }, params, opts),
      create: (params, opts) =>
        one(
          transaction,
          {
            method: 'POST',
            pattern: '/v1/transactions',
            body: transactionCreateBody(params),
            bodyIds: { 'customer.id': params.customer?.id },
          },
          opts,
        ),
      update: (id, params, opts) =>
        one(
          transaction,
          {
            method: 'PUT',
            pattern: '/v1/transactions/:id',
            path: { id },
            body: {
              description: params.description,
              amount: params.amount,
              callback_url: params.callbackUrl,
              status: params.status,
            },
          },
          opts,
        ),
      delete: (id, opts) => one(transaction, { method: 'DELETE', pattern: '/v1/transactions/:id', path: { id } }, opts),
      createToken: (id, opts) =>
        one(token, { method: 'POST', pattern: '/v1/transactions/:id/token', path: { id } }, opts),
      send: (mode, params, opts) =>
        many(
          paymentIntent,
          {
            method: 'POST',
            pattern: '/v1/transactions/:mode',
            path: { mode },
            body: { token: params.token, phone_number: phoneNumberBody(params.phoneNumber) },
          },
          opts,
        ),
    },
    payouts: {
      retrieve: (id, opts) => one(payout, { method: 'GET', pattern: '/v1/payouts/:id', path: { id } }, opts),
      list: (params, opts) => page(payout, { method: 'GET', pattern: '/v1/payouts', query: pageQuery(params) }, params, opts),
      search: (params, opts) =>
        page(payout, { method: 'GET', pattern: '/v1/payouts/search', query: searchQuery(params) }, params, opts),
      create: (params, opts) =>
        one(
          payout,
          { method: 'POST', pattern: '/v1/payouts', body: payoutBody(params), bodyIds: { 'customer.id': params.customer?.id } },
          opts,
        ),
      update: (id, params, opts) =>
        one(
          payout,
          {
            method: 'PUT',
            pattern: '/v1/payouts/:id',
            path: { id },
            body: payoutBody(params),
            bodyIds: { 'customer.id': params.customer?.id },
          },
          opts,
        ),
      delete: (id, opts) => one(payout, { method: 'DELETE', pattern: '/v1/payouts/:id', path: { id } }, opts),
      start: (items, opts) =>
        many(
          payout,
          {
            method: 'PUT',
            pattern: '/v1/payouts/start',
            body: payoutStartBody(items),
            bodyIds: Object.fromEntries(items.map((item, i) => [`payouts[${i}].id`, item.id])),
          },
          opts,
        ),
    },
    customers: {
      retrieve: (id, opts) => one(customer, { method: 'GET', pattern: '/v1/customers/:id', path: { id } }, opts),
      list: (params, opts) =>
        page(customer, { method: 'GET', pattern: '/v1/customers', query: pageQuery(params) }, params, opts),
      search: (params, opts) =>
        page(customer, { method: 'GET', pattern: '/v1/customers/search', query: customerSearchQuery(params) }, params, opts),
      create: (params, opts) => one(customer, { method: 'POST', pattern: '/v1/customers', body: customerBody(params) }, opts),
      update: (id, params, opts) =>
        one(customer, { method: 'PUT', pattern: '/v1/customers/:id', path: { id }, body: customerBody(params) }, opts),
      delete: (id, opts) => one(customer, { method: 'DELETE', pattern: '/v1/customers/:id', path: { id } }, opts),
    },
    currencies: {
      list: (opts) => many(currency, { method: 'GET', pattern: '/v1/currencies' }, opts),
      retrieve: (id, opts) => one(currency, { method: 'GET', pattern: '/v1/currencies/:id', path: { id } }, opts),
    },
    webhooks: {
      list: (opts) => many(webhook, { method: 'GET', pattern: '/v1/webhooks' }, opts),
      retrieve: (id, opts) => one(webhook, { method: 'GET', pattern: '/v1/webhooks/:id', path: { id } }, opts),
      create: (params, opts) => one(webhook, { method: 'POST', pattern: '/v1/webhooks', body: webhookBody(params) }, opts),
      update: (id, params, opts) =>
        one(webhook, { method: 'PUT', pattern: '/v1/webhooks/:id', path: { id }, body: webhookBody(params) }, opts),
      delete: (id, opts) => one(webhook, { method: 'DELETE', pattern: '/v1/webhooks/:id', path: { id } }, opts),
    },
    events: {
      retrieve: (id, opts) => one(event, { method: 'GET', pattern: '/v1/events/:id', path: { id } }, opts),
      list: (params, opts) =>
        page(
          event,
          {
            method: 'GET',
            pattern: '/v1/events',
            query: { ...pageQuery(params), 'filters[type]': params?.type, 'filters[object_id]': params?.objectId },
          },
          params,
          opts,
        ),
    },
    logs: {
      retrieve: (id, opts) => one(log, { method: 'GET', pattern: '/v1/logs/:id', path: { id } }, opts),
      list: (params, opts) => page(log, { method: 'GET', pattern: '/v1/logs', query: pageQuery(params) }, params, opts),
    },
    accounts: {
      // Seen both as `{"v1/account": {...}}` and as a list `{"v1/accounts": [one]}`; decodeOne takes either.
      current: (opts) => one(account, { method: 'GET', pattern: '/v1/accounts' }, opts),
    },
  };
}

// ---------------------------------------------------------------------------
// camelCase params -> snake_case wire shapes. `undefined` fields are dropped by
// JSON serialisation, so partial updates send only what was given.

function pageQuery(params: ListParams = {}): Record<string, QueryValue> {
  return { page: params.page, per_page: params.perPage };
}

function searchQuery(params: SearchParams = {}): Record<string, QueryValue> {
  return {
    ...pageQuery(params),
    'filters[status]': params.status,
    'filters[customer_id]': params.customerId,
    'filters[created_after]': params.createdAfter,
    'filters[created_before]': params.createdBefore,
  };
}

function customerSearchQuery(params: CustomerSearchParams = {}): Record<string, QueryValue> {
  return {
    ...pageQuery(params),
    'filters[email]': params.email,
    'filters[q]': params.query,
    'filters[created_after]': params.createdAfter,
    'filters[created_before]': params.createdBefore,
  };
}

function phoneNumberBody(phone: PhoneNumberParams | undefined) {
  return phone === undefined ? undefined : { number: phone.number, country: phone.country };
}

/** An existing customer is referenced by id alone; otherwise the upstream creates one from the details. */
function customerRefBody(ref: CustomerRefParams | undefined) {
  if (ref === undefined) return undefined;
  if (ref.id !== undefined) return { id: ref.id };
  return {
    firstname: ref.firstname,
    lastname: ref.lastname,
    email: ref.email,
    phone_number: phoneNumberBody(ref.phoneNumber),
  };
}

function currencyBody(iso: string | undefined) {
  return iso === undefined ? undefined : { iso };
}

function transactionCreateBody(params: TransactionCreateParams) {
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

function payoutBody(params: Partial<PayoutCreateParams>) {
  return {
    amount: params.amount,
    currency: currencyBody(params.currencyIso),
    customer: customerRefBody(params.customer),
    mode: params.mode,
    merchant_reference: params.merchantReference,
    custom_metadata: params.customMetadata,
  };
}

function payoutStartBody(items: PayoutStartItem[]) {
  // The spec shows a bare array; the client libraries send `{"payouts": [...]}` (upstream.md).
  return {
    payouts: items.map((item) => ({
      id: item.id,
      scheduled_at: item.scheduledAt,
      phone_number: phoneNumberBody(item.phoneNumber),
    })),
  };
}

function customerBody(params: Partial<CustomerCreateParams>) {
  return {
    firstname: params.firstname,
    lastname: params.lastname,
    email: params.email,
    phone_number: phoneNumberBody(params.phoneNumber),
  };
}

function webhookBody(params: Partial<WebhookCreateParams>) {
  return {
    url: params.url,
    enabled: params.enabled,
    ssl_verify: params.sslVerify,
    disable_on_error: params.disableOnError,
    secret: params.secret,
  };
}
