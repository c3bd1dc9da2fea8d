/**
 * Every upstream failure as one typed class per kind the gateway reacts to differently.
 * Messages are fixed text plus the route, never the upstream body (it may echo secrets)
 * nor the API key; a validation message, meant for the caller, is capped and redacted.
 */

export interface UpstreamErrorInit {
  /** e.g. `GET /v1/customers/:id` (`routeLabel`). */
  route: string;
  statusCode?: number;
  requestId?: string;
}

export class UpstreamError extends Error {
  override readonly name: string;
  /** Stable snake_case, e.g. `not_found`; `unexpected_status` when no subclass covers it. */
  readonly code: string;
  readonly route: string;
  /** Unset for a bad 2xx body. */
  readonly statusCode?: number;
  readonly requestId?: string;

  constructor(message: string, code: string, init: UpstreamErrorInit) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.route = init.route;
    if (init.statusCode !== undefined) this.statusCode = init.statusCode;
    if (init.requestId !== undefined) this.requestId = init.requestId;
  }
}

/** The upstream rejected the API key (401), or the key cannot be sent at all. */
export class UpstreamAuthenticationError extends UpstreamError {
  constructor(init: UpstreamErrorInit) {
    super(`Upstream rejected the API key on ${init.route}`, 'authentication_failed', init);
  }
}

export class UpstreamPermissionError extends UpstreamError {
  constructor(init: UpstreamErrorInit) {
    super(`Upstream denied permission on ${init.route}`, 'permission_denied', init);
  }
}

/** The resource does not exist for this key's account and environment (404, or an empty array). */
export class UpstreamNotFoundError extends UpstreamError {
  constructor(init: UpstreamErrorInit) {
    super(`Upstream resource not found on ${init.route}`, 'not_found', init);
  }
}

export const MAX_VALIDATION_MESSAGE_LENGTH = 300;

export interface UpstreamValidationErrorInit extends UpstreamErrorInit {
  /** The upstream's own validation message; safe to show, capped in length. */
  upstreamMessage?: string;
  fieldErrors?: Record<string, string[]>;
}

/** A 405, or a 404 on a path naming no object: never "not found", which would turn a missing list into an empty one. */
export class UpstreamRouteMissingError extends UpstreamError {
  /** Whether the spec defines the route (spec.ts): if not, the upstream is within its rights. */
  readonly beyondSpec: boolean;
  constructor(init: UpstreamErrorInit & { beyondSpec: boolean }) {
    super(`Upstream does not offer ${init.route}${init.beyondSpec ? ' (a call beyond the spec)' : ''}`, 'route_missing', init);
    this.beyondSpec = init.beyondSpec;
  }
}

/** `page` or `per_page` ignored (applied.ts): cursors built on that answer would be wrong. An ignored filter is no error: rows are checked. */
export class UpstreamParameterIgnoredError extends UpstreamError {
  readonly parameter: string;
  constructor(init: UpstreamErrorInit & { parameter: string }) {
    super(`Upstream ignored ${init.parameter} on ${init.route}`, 'parameter_ignored', init);
    this.parameter = init.parameter;
  }
}

/** The request was rejected as invalid (400/422), or failed the client's own checks before sending. */
export class UpstreamValidationError extends UpstreamError {
  readonly fieldErrors: Record<string, string[]>;
  readonly upstreamMessage?: string;

  constructor(init: UpstreamValidationErrorInit) {
    const upstreamMessage = init.upstreamMessage === undefined ? undefined : capLength(init.upstreamMessage);
    super(
      upstreamMessage ? `Upstream validation failed on ${init.route}: ${upstreamMessage}` : `Upstream validation failed on ${init.route}`,
      'validation_failed',
      init,
    );
    this.fieldErrors = init.fieldErrors ?? {};
    if (upstreamMessage !== undefined) this.upstreamMessage = upstreamMessage;
  }
}

export class UpstreamConflictError extends UpstreamError {
  constructor(init: UpstreamErrorInit) {
    super(`Upstream reported a conflict on ${init.route}`, 'conflict', init);
  }
}

/** The upstream is throttling this key (429); `retryAfterSeconds` comes from `Retry-After`. */
export class UpstreamRateLimitError extends UpstreamError {
  readonly retryAfterSeconds?: number;
  constructor(init: UpstreamErrorInit & { retryAfterSeconds?: number }) {
    super(`Upstream rate limit reached on ${init.route}`, 'rate_limited', init);
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

export class UpstreamServerError extends UpstreamError {
  constructor(init: UpstreamErrorInit) {
    super(`Upstream server error on ${init.route}`, 'server_error', init);
  }
}

export class UpstreamTimeoutError extends UpstreamError {
  constructor(init: UpstreamErrorInit & { timeoutMs: number }) {
    super(`Upstream did not answer within ${init.timeoutMs} ms on ${init.route}`, 'timeout', init);
  }
}

export type ConnectionReason = 'connection_refused' | 'connection_reset' | 'dns' | 'tls' | 'timed_out' | 'connection_failed';

export function connectionReason(systemCode: string | undefined): ConnectionReason {
  switch (systemCode) {
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
      return 'connection_reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'dns';
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return 'timed_out';
  }
  if (systemCode && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT)/.test(systemCode)) return 'tls';
  return 'connection_failed';
}

/** The connection to the upstream failed (refused, reset, DNS); `systemCode` is e.g. `ECONNRESET`. */
export class UpstreamConnectionError extends UpstreamError {
  readonly systemCode?: string;
  get connectionReason(): ConnectionReason {
    return connectionReason(this.systemCode);
  }
  constructor(init: UpstreamErrorInit & { systemCode?: string }) {
    super(
      `Connection to upstream failed${init.systemCode ? ` (${init.systemCode})` : ''} on ${init.route}`,
      'connection_failed',
      init,
    );
    if (init.systemCode !== undefined) this.systemCode = init.systemCode;
  }
}

/** The gateway did not call, or stopped reading: `circuit_open`, `route_saturated` or `bytes_in_flight` (byte-budget.ts). */
export class UpstreamUnavailableError extends UpstreamError {
  readonly reason: 'circuit_open' | 'route_saturated' | 'bytes_in_flight';
  constructor(init: UpstreamErrorInit & { reason: 'circuit_open' | 'route_saturated' | 'bytes_in_flight' }) {
    super(`Upstream route not called (${init.reason}) on ${init.route}`, init.reason, init);
    this.reason = init.reason;
  }
}

/** Never retried: the same call would bring the same answer. */
export class UpstreamResponseTooLargeError extends UpstreamError {
  readonly maxBytes: number;
  constructor(init: UpstreamErrorInit & { maxBytes: number }) {
    super(`Upstream answer over ${init.maxBytes} bytes on ${init.route}`, 'response_too_large', init);
    this.maxBytes = init.maxBytes;
  }
}

/** The upstream answered with a body that is not JSON or does not match the expected model. */
export class UpstreamInvalidResponseError extends UpstreamError {
  /** A malformed list item's sound id, by which keyset pages place it (pagination.ts). */
  readonly itemId: number | undefined;

  /** `detail` must name a resource and a path, never a value from the body. */
  constructor(init: UpstreamErrorInit & { detail: string; itemId?: number | undefined }) {
    super(`Upstream returned an invalid response on ${init.route}: ${init.detail}`, 'invalid_response', init);
    this.itemId = init.itemId;
  }
}

function capLength(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= MAX_VALIDATION_MESSAGE_LENGTH ? oneLine : `${oneLine.slice(0, MAX_VALIDATION_MESSAGE_LENGTH - 1)}…`;
}

export interface ErrorBody {
  message?: string;
  fieldErrors: Record<string, string[]>;
}

/** Any other body, even non-JSON, decodes to nothing: the status alone still classifies the error. */
export function decodeErrorBody(text: string): ErrorBody {
  let body: unknown;
  try {
    // An error body carries messages, never amounts.
    // eslint-disable-next-line no-restricted-properties
    body = JSON.parse(text);
  } catch {
    return { fieldErrors: {} };
  }
  if (!isPlainObject(body)) return { fieldErrors: {} };
  const fieldErrors: Record<string, string[]> = {};
  if (isPlainObject(body['errors'])) {
    for (const [field, messages] of Object.entries(body['errors'])) {
      const list = (Array.isArray(messages) ? messages : [messages]).filter((m): m is string => typeof m === 'string');
      if (list.length > 0) fieldErrors[field] = list;
    }
  }
  const message = body['message'];
  return typeof message === 'string' ? { message, fieldErrors } : { fieldErrors };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The key, if the body echoes it, is redacted from the messages kept for callers. */
export function errorFromResponse(
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
  // Refused for its size (413, or a 503 naming it): that key's pages, not the upstream's health.
  if (status === 413 || (status === 503 && sizeRefusal(text))) return new UpstreamResponseTooLargeError({ ...init, maxBytes: refusedAbove(text) });
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

const SIZE_CODES = new Set(['page_too_large', 'response_too_large']);

function errorCode(text: string): unknown {
  try {
    // An error body carries messages, never amounts.
    // eslint-disable-next-line no-restricted-properties
    const body: unknown = JSON.parse(text);
    return isPlainObject(body) ? body['code'] : undefined;
  } catch {
    return undefined;
  }
}

function sizeRefusal(text: string): boolean {
  const code = errorCode(text);
  return typeof code === 'string' && SIZE_CODES.has(code);
}

/** The ceiling the upstream names (`max_bytes`), or 0 when it names none. */
function refusedAbove(text: string): number {
  try {
    // eslint-disable-next-line no-restricted-properties
    const body: unknown = JSON.parse(text);
    const max = isPlainObject(body) ? body['max_bytes'] : undefined;
    return typeof max === 'number' && Number.isSafeInteger(max) && max > 0 ? max : 0;
  } catch {
    return 0;
  }
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
