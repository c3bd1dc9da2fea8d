/**
 * The calls of the REST client: one `request()` per call (headers, body,
 * deadline and abort, retries through resilience.ts) and the one place a URL
 * is built (ids validated before any I/O). Each attempt goes out through a
 * `Transport` (transport.ts: got or node:http). Status codes become typed
 * errors in errors.ts; resources/ say what each endpoint sends and decodes.
 */
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
import type { HttpMethod, Transport, TransportRequest } from './transport.js';
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

export type { HttpMethod } from './transport.js';

/** `GET /v1/customers/:id`: the label errors carry, low-cardinality for metrics and logs. */
export function routeLabel(method: HttpMethod, pattern: string): string {
  return `${method} ${pattern}`;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
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

export interface RequestContext {
  baseUrl: URL;
  apiKey: string;
  /** A hash of the key: who the call is for, for per-caller fairness; the key itself stays in the header. */
  caller: string;
  scope: OperationScope;
  observer?: UpstreamObserver | undefined;
}

export async function request(transport: Transport, resilience: Resilience, rc: RequestContext, call: Call, opts: CallOptions = {}): Promise<Received> {
  const route = routeLabel(call.method, call.pattern);
  const url = buildUrl(rc.baseUrl, call, route);
  for (const [field, id] of Object.entries(call.bodyIds ?? {})) {
    if (id !== undefined) requirePositiveInt(field, id, route);
  }
  if (!API_KEY_PATTERN.test(rc.apiKey)) throw new UpstreamAuthenticationError({ route });
  const signals = [opts.signal, rc.scope.signal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  signal?.throwIfAborted();
  // Encoded once for every attempt; amounts are `Decimal`s, written as JSON number tokens from their digits.
  const body = call.body === undefined ? undefined : encodeJsonBody(call.body);

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
      const headers = {
        ...watch?.headers,
        authorization: `Bearer ${rc.apiKey}`,
        ...(opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey }),
        ...(rc.scope.requestId === undefined ? {} : { 'x-request-id': rc.scope.requestId }),
      };
      const sent = { route, method: call.method, headers, timeoutMs, ...(body === undefined ? {} : { body }), ...(signal === undefined ? {} : { signal }) };
      return attempt(transport, url, sent, call, rc.apiKey).then(
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

async function attempt(transport: Transport, url: URL, sent: TransportRequest, call: Call, apiKey: string): Promise<{ received: Received; status: number }> {
  const { route } = sent;
  // The transport's failures are already typed, and an abort rejects with the caller's reason (transport.ts).
  const response = await transport.send(url, sent);

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

export function parseBaseUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Upstream baseUrl must be http or https, got ${url.protocol}`);
  }
  return url;
}
