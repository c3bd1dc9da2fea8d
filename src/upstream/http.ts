/**
 * The transport of the REST client: one got instance with keep-alive agents,
 * one `request()` per call (headers, deadline and abort, retries through
 * resilience.ts) and the one place a URL is built (ids validated before any
 * I/O). Status codes become typed errors in errors.ts; resources/ say what
 * each endpoint sends and decodes.
 */
import http from 'node:http';
import https from 'node:https';
import got, { RequestError, TimeoutError, type Got } from 'got';
import type { CallOptions } from './api.js';
import { encodeJsonBody } from './decode.js';
import {
  errorFromResponse,
  UpstreamAuthenticationError,
  UpstreamConnectionError,
  UpstreamRouteMissingError,
  UpstreamTimeoutError,
  UpstreamValidationError,
  type UpstreamErrorInit,
} from './errors.js';
import type { Resilience } from './resilience.js';
import { isSpecRoute, routeIsMissing } from './spec.js';
import type { AttemptResult, UpstreamObserver } from './observer.js';

/** What one GraphQL operation imposes on every upstream call it makes. */
export interface OperationScope {
  /** Epoch ms: no attempt starts, and no retry waits, past it; an attempt's time-out shrinks to fit. */
  deadlineAt?: number;
  /** Aborts every call of the operation (client gone, shutdown). */
  signal?: AbortSignal;
  /** Sent as `x-request-id` on every call, so the upstream's logs join ours. */
  requestId?: string;
  /** The operation as its observer knows it (its span); opaque to the client, handed back to the observer. */
  observed?: unknown;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** `GET /v1/customers/:id`: the label errors carry, low-cardinality for metrics and logs. */
export function routeLabel(method: HttpMethod, pattern: string): string {
  return `${method} ${pattern}`;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
const SOURCE = 'payments-graphql-gateway';
/** Path segment of the send step (docs/upstream.md, Operations: mtn, moov, mtn_ci, moov_tg, mtn_open). */
export const MODE_PATTERN = /^[a-z0-9_]+$/;
/** Printable ASCII without spaces: anything else cannot travel in a header. */
const API_KEY_PATTERN = /^[\x21-\x7e]+$/;

export type QueryValue = string | number | undefined;

export interface Call {
  method: HttpMethod;
  /** Path with `:name` placeholders; also the route label. */
  pattern: string;
  path?: Record<string, unknown>;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Ids inside the body, by field name, checked like path ids before any I/O (absent ones skipped). */
  bodyIds?: Record<string, unknown>;
}

export interface Received {
  text: string;
  /** Context for errors raised while decoding a 2xx body (no statusCode: the status was fine). */
  ctx: UpstreamErrorInit;
}

export type Send = (call: Call, opts?: CallOptions) => Promise<Received>;

export interface Transport {
  got: Got;
  close(): void;
}

/** The shared got instance: keep-alive sockets, no retries of its own, no redirects. */
export function createTransport(options: { timeoutMs: number; userAgent?: string }): Transport {
  const agent = {
    http: new http.Agent({ keepAlive: true, maxSockets: 256 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 256 }),
  };
  const instance = got.extend({
    agent,
    responseType: 'text',
    throwHttpErrors: false,
    // got never retries: resilience.ts does, only for repeatable calls and within the deadline.
    retry: { limit: 0 },
    timeout: { request: options.timeoutMs },
    // A redirect is unexpected from a JSON API; never carry the key elsewhere.
    followRedirect: false,
    // Amounts are `Decimal`s: written as JSON number tokens from their digits (decode.ts).
    stringifyJson: encodeJsonBody,
    headers: {
      accept: 'application/json',
      'user-agent': options.userAgent ?? SOURCE,
      'x-version': 'v1',
      'x-source': SOURCE,
    },
  });
  return {
    got: instance,
    close: () => {
      agent.http.destroy();
      agent.https.destroy();
    },
  };
}

export interface RequestContext {
  baseUrl: URL;
  apiKey: string;
  /** A hash of the key: who the call is for, for per-caller fairness; the key itself stays in the header. */
  caller: string;
  scope: OperationScope;
  observer?: UpstreamObserver | undefined;
}

export async function request(transport: Got, resilience: Resilience, rc: RequestContext, call: Call, opts: CallOptions = {}): Promise<Received> {
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
      caller: rc.caller,
      repeatable,
      ...(rc.scope.deadlineAt === undefined ? {} : { deadlineAt: rc.scope.deadlineAt }),
      ...(signal === undefined ? {} : { signal }),
    },
    (timeoutMs, n) => {
      const watch = rc.observer?.attempt({ method: call.method, pattern: call.pattern, attempt: n, operation: rc.scope.observed });
      return attempt(transport, rc, url, route, call, opts, signal, timeoutMs, watch?.headers).then(
        (received) => {
          watch?.end({ status: received.status });
          return received.received;
        },
        (error: unknown) => {
          watch?.end(attemptFailure(error, signal));
          throw error;
        },
      );
    },
  );
}

/** An upstream answer turned error keeps its status for the observer; anything else is named by its cause. */
function attemptFailure(error: unknown, signal: AbortSignal | undefined): AttemptResult {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number') return { status };
  if (signal?.aborted) return { failure: 'aborted' };
  if (error instanceof UpstreamTimeoutError) return { failure: 'timeout' };
  if (error instanceof UpstreamConnectionError) return { failure: 'connection' };
  return { failure: 'other' };
}

async function attempt(
  transport: Got,
  rc: RequestContext,
  url: URL,
  route: string,
  call: Call,
  opts: CallOptions,
  signal: AbortSignal | undefined,
  timeoutMs: number,
  traceHeaders: Record<string, string> | undefined,
): Promise<{ received: Received; status: number }> {
  const { apiKey } = rc;
  let response;
  try {
    response = await transport(url, {
      method: call.method,
      headers: {
        ...traceHeaders,
        authorization: `Bearer ${apiKey}`,
        ...(opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey }),
        ...(rc.scope.requestId === undefined ? {} : { 'x-request-id': rc.scope.requestId }),
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
  if (status >= 200 && status < 300) return { received: { text: response.body, ctx }, status };
  if (routeIsMissing(status, call)) throw new UpstreamRouteMissingError({ ...ctx, statusCode: status, beyondSpec: !isSpecRoute(call) });
  throw errorFromResponse(status, response.body, response.headers['retry-after'], { ...ctx, statusCode: status }, apiKey);
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

export function parseBaseUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Upstream baseUrl must be http or https, got ${url.protocol}`);
  }
  return url;
}
