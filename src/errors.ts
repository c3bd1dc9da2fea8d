/**
 * Both error mappings: `toGraphQLError` (upstream failure -> coded GraphQL error, applied once in `formatError`)
 * and `toUserErrors` (what a mutation's caller can fix -> `userErrors`).
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import {
  UpstreamAuthenticationError,
  UpstreamConnectionError,
  UpstreamError,
  UpstreamNotFoundError,
  UpstreamPermissionError,
  UpstreamRateLimitError,
  UpstreamServerError,
  UpstreamTimeoutError,
  UpstreamValidationError,
  UpstreamConflictError,
  UpstreamParameterIgnoredError,
  UpstreamRouteMissingError,
  UpstreamUnavailableError,
} from './upstream/index.js';
// The schema prefixes value types for federation; the code keeps the plain name.
import { PaymentsUserErrorCode as UserErrorCode } from './__generated__/schema-enums.js';
import { snakeToCamel } from './naming.js';

export { UserErrorCode };

export const ErrorCode = {
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UPSTREAM_TIMEOUT: 'UPSTREAM_TIMEOUT',
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  UPSTREAM_UNSUPPORTED: 'UPSTREAM_UNSUPPORTED',
  RATE_LIMITED: 'RATE_LIMITED',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_IN_PROGRESS: 'IDEMPOTENCY_IN_PROGRESS',
  IDEMPOTENCY_UNAVAILABLE: 'IDEMPOTENCY_UNAVAILABLE',
  IDEMPOTENCY_RESULT_NOT_KEPT: 'IDEMPOTENCY_RESULT_NOT_KEPT',
  OPERATION_TOO_COSTLY: 'OPERATION_TOO_COSTLY',
  UPSTREAM_BUDGET_EXCEEDED: 'UPSTREAM_BUDGET_EXCEEDED',
  RESPONSE_TOO_LARGE: 'RESPONSE_TOO_LARGE',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: ErrorCode.UNAUTHENTICATED, http: { status: 401 } },
  });
}

export function forbidden(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: ErrorCode.FORBIDDEN, http: { status: 403 } },
  });
}

export function badUserInput(message: string, argument?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: ErrorCode.BAD_USER_INPUT, ...(argument ? { argument } : {}) },
  });
}

interface Mapped {
  code: ErrorCode;
  message: string;
  extra?: Record<string, unknown>;
}

const UNAVAILABLE: Mapped = { code: ErrorCode.UPSTREAM_UNAVAILABLE, message: 'The payments API is unavailable.' };
const FAILED: Mapped = { code: ErrorCode.UPSTREAM_ERROR, message: 'The payments API failed to answer this request.' };

const BY_CLASS: ReadonlyArray<readonly [abstract new (...args: never[]) => UpstreamError, Mapped]> = [
  [UpstreamAuthenticationError, { code: ErrorCode.UNAUTHENTICATED, message: 'The payments API rejected the API key.' }],
  [UpstreamPermissionError, { code: ErrorCode.FORBIDDEN, message: 'The API key may not perform this operation.' }],
  [UpstreamNotFoundError, { code: ErrorCode.BAD_USER_INPUT, message: 'The referenced object does not exist.' }],
  [UpstreamConflictError, { code: ErrorCode.BAD_USER_INPUT, message: 'The object is not in a state that allows this change.' }],
  [UpstreamTimeoutError, { code: ErrorCode.UPSTREAM_TIMEOUT, message: 'The payments API did not answer in time.' }],
];

/** Messages are ours, never the upstream body; only a validation message (meant for end users) is kept. */
export function toGraphQLError(error: UpstreamError): Mapped {
  const byClass = BY_CLASS.find(([type]) => error instanceof type);
  if (byClass) return { ...byClass[1] };
  // The reason tells an operator what to fix (a refused port, a DNS name, a certificate) and names no address.
  if (error instanceof UpstreamConnectionError) return { ...UNAVAILABLE, extra: { reason: error.connectionReason } };
  if (error instanceof UpstreamValidationError) {
    return {
      code: ErrorCode.BAD_USER_INPUT,
      message: plainText(error.message),
      extra: { fieldErrors: error.fieldErrors },
    };
  }
  // The route and parameter are our own labels (method, pattern, parameter name), never a value: safe to name.
  if (error instanceof UpstreamRouteMissingError) {
    return {
      code: ErrorCode.UPSTREAM_UNSUPPORTED,
      message: `The payments API does not offer ${error.route}, which this field needs.`,
      extra: { reason: 'route_missing' },
    };
  }
  if (error instanceof UpstreamParameterIgnoredError) {
    return {
      code: ErrorCode.UPSTREAM_UNSUPPORTED,
      message: `The payments API ignored ${error.parameter} on ${error.route}, so its answer cannot be served for this field.`,
      extra: { reason: 'parameter_ignored', parameter: error.parameter },
    };
  }
  if (error instanceof UpstreamRateLimitError) {
    return {
      code: ErrorCode.RATE_LIMITED,
      message: 'The payments API is rate limiting this key; retry later.',
      extra: error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {},
    };
  }
  if (error instanceof UpstreamUnavailableError) {
    // Shed, not failed: the bytes it waits for are freed as soon as the answers in flight are decoded.
    if (error.reason === 'bytes_in_flight') {
      return {
        code: ErrorCode.UPSTREAM_UNAVAILABLE,
        message: 'Too many payments API answer bytes are being read for this key or for all callers; retry shortly.',
        extra: { reason: error.reason, retryAfterSeconds: 1 },
      };
    }
    return {
      code: ErrorCode.UPSTREAM_UNAVAILABLE,
      message:
        error.reason === 'circuit_open'
          ? 'The payments API is failing on this route; calls are paused for a short while.'
          : 'Too many calls to this payments API route are in flight; retry shortly.',
      extra: { reason: error.reason },
    };
  }
  return error instanceof UpstreamServerError && error.statusCode === 503 ? { ...UNAVAILABLE } : { ...FAILED };
}

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));
export const REQUEST_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

export interface ErrorFormatterDeps {
  onInternalError(original: unknown, raised: unknown): void;
  requestMessage?(message: string): string;
}

// graphql-js's bare message when comparing repeated fields would take too long; callers get one saying what to change.
const VALIDATION_ABORTED = 'Validation aborted.';
const VALIDATION_ABORTED_EXPLAINED =
  'Validation aborted: the document is too costly to validate (too many fields of the same name, or fragment spreads, in one selection). Ask for each field once.';

export function createErrorFormatter({ onInternalError, requestMessage = (m) => m }: ErrorFormatterDeps) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    const base = { locations: formatted.locations, path: formatted.path };
    if (original instanceof UpstreamError) {
      const mapped = toGraphQLError(original);
      return {
        ...base,
        message: mapped.message,
        extensions: { code: mapped.code, upstream: { route: original.route, status: original.statusCode }, ...mapped.extra },
      };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && (KNOWN_CODES.has(code) || REQUEST_CODES.has(code)) && code !== ErrorCode.INTERNAL_SERVER_ERROR) {
      // Drop whatever else rides in extensions (stacktrace, exception) and the HTTP status, which WebSocket and SSE lack.
      const { stacktrace: _stacktrace, exception: _exception, http: _http, ...extensions } = formatted.extensions ?? {};
      const message = formatted.message === VALIDATION_ABORTED ? VALIDATION_ABORTED_EXPLAINED : formatted.message;
      return { ...base, message: REQUEST_CODES.has(code) ? requestMessage(message) : message, extensions };
    }
    // A scalar rejecting a value (e.g. EmailAddress) surfaces as a plain GraphQLError.
    if (error instanceof GraphQLError && !error.originalError && !error.path) {
      return { ...base, message: formatted.message, extensions: { code: ErrorCode.BAD_USER_INPUT } };
    }
    onInternalError(original, error);
    return { ...base, message: 'Internal server error.', extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR } };
  };
}

export interface UserError {
  field: string[] | null;
  message: string;
  code: UserErrorCode;
}

export class UserInputError extends Error {
  constructor(readonly userErrors: UserError[]) {
    super(userErrors.map((e) => e.message).join('; '));
    this.name = 'UserInputError';
  }
}

function upstreamPath(upstreamField: string): string[] {
  return upstreamField.split(/[.[\]]+/).filter(Boolean).map(snakeToCamel);
}

/**
 * Where upstream refusals land in a mutation's input: `root` the argument the body was built from (null: the
 * mutation's own arguments), `idField` where a 404 points, `mapField` upstream parts -> input parts (null: unplaced).
 */
export interface UserErrorShape {
  root: string | null;
  idField?: string[] | null;
  mapField?: (parts: string[]) => string[] | null;
  /** Names the object in a refused state change's message (the upstream's 409 says only "conflict"). */
  object?: { kind: string; read: () => Promise<{ status: string }> };
}

// The upstream's field errors are text only (docs/upstream.md, Errors), so "missing" and "unknown id" go by wording;
// not a bare "no such ...", which also fits values that are not objects (a mode, a route).
const MISSING_VALUE = /required|missing|blank/i;
const UNKNOWN_OBJECT = /not found|does not exist|\bno [a-z_ ]+ with id\b/i;

const MAX_REFLECTED_CHARS = 200;

function plainText(message: string): string {
  const text = message
    .replace(/<[^>]*>/g, ' ')
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length <= MAX_REFLECTED_CHARS ? text : `${text.slice(0, MAX_REFLECTED_CHARS - 1)}…`;
}

function fieldMessageCode(message: string): UserErrorCode {
  if (UNKNOWN_OBJECT.test(message)) return UserErrorCode.NotFound;
  return MISSING_VALUE.test(message) ? UserErrorCode.Required : UserErrorCode.Invalid;
}

/** A failure the mutation's caller can act on -> `userErrors`; `null` for every other failure. */
export function toUserErrors(error: unknown, shape: UserErrorShape): UserError[] | null {
  const { root, idField = ['id'], mapField = (parts: string[]) => parts } = shape;
  if (error instanceof UserInputError) return error.userErrors;
  if (error instanceof UpstreamValidationError) {
    const entries = Object.entries(error.fieldErrors);
    // Refused without saying which input: the caller cannot know what to fix (docs/graphql-contract.md, userErrors codes).
    if (entries.length === 0) {
      return [{ field: null, message: plainText(error.upstreamMessage ?? 'The payments API refused the input.'), code: UserErrorCode.Unknown }];
    }
    return entries.flatMap(([field, messages]) => {
      const parts = mapField(upstreamPath(field));
      const path = parts === null ? null : root ? [root, ...parts] : parts;
      return messages.map((message) => ({ field: path, message: plainText(message), code: fieldMessageCode(message) }));
    });
  }
  if (error instanceof UpstreamNotFoundError) {
    return [{ field: idField, message: 'No such object in this account.', code: UserErrorCode.NotFound }];
  }
  if (error instanceof UpstreamConflictError) {
    // The error's own message names the route, which means nothing to a form.
    return [{ field: null, message: 'The object is not in a status that allows this change.', code: UserErrorCode.InvalidState }];
  }
  return null;
}
