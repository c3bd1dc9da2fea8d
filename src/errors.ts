/**
 * The gateway's two error mappings, side by side, with every code they use:
 * - `toGraphQLError`: an upstream failure (typed `UpstreamError`,
 *   src/upstream/errors.ts) -> a GraphQL error with an `ErrorCode`. Applied
 *   once, in Apollo's `formatError`, so resolvers let upstream errors propagate.
 * - `toUserErrors`: what a mutation's caller can fix (bad input, unknown id,
 *   refused state change) -> `userErrors` entries with a `UserErrorCode`, for
 *   the payload instead of an error.
 * The error tables of docs/graphql-contract.md are checked against both code lists.
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
// The schema prefixes its value types for federation (docs/federation.md, Value types); the code
// keeps the plain name, as it has no other user error to tell this one from.
import { PaymentsUserErrorCode as UserErrorCode } from './__generated__/schema-enums.js';
import { snakeToCamel } from './naming.js';

export { UserErrorCode };

/** The `extensions.code` values of GraphQL errors (docs/graphql-contract.md, "The contract in brief"). */
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

/** The failures whose code and message follow from their class alone. */
const BY_CLASS: ReadonlyArray<readonly [abstract new (...args: never[]) => UpstreamError, Mapped]> = [
  [UpstreamAuthenticationError, { code: ErrorCode.UNAUTHENTICATED, message: 'The payments API rejected the API key.' }],
  [UpstreamPermissionError, { code: ErrorCode.FORBIDDEN, message: 'The API key may not perform this operation.' }],
  [UpstreamNotFoundError, { code: ErrorCode.BAD_USER_INPUT, message: 'The referenced object does not exist.' }],
  [UpstreamConflictError, { code: ErrorCode.BAD_USER_INPUT, message: 'The object is not in a state that allows this change.' }],
  [UpstreamTimeoutError, { code: ErrorCode.UPSTREAM_TIMEOUT, message: 'The payments API did not answer in time.' }],
];

/**
 * Maps an upstream failure to what a caller may see. Messages are ours, never
 * the upstream body; only a validation message (meant for end users) is kept.
 * A server error, an invalid response or an unexpected status is UPSTREAM_ERROR.
 */
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
/** Codes graphql-js and Apollo Server produce themselves for a bad request. */
export const REQUEST_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
]);

export interface ErrorFormatterDeps {
  /** Told about every error that is masked, so nothing is lost from the logs: its cause, and the error as raised. */
  onInternalError(original: unknown, raised: unknown): void;
  /** Rewrites the message of a request error (e.g. to drop graphql-js's "Did you mean …?" hints). */
  requestMessage?(message: string): string;
}

/**
 * graphql-js stops validating a document whose repeated fields or fragment spreads would take too
 * long to compare, with this bare message; callers get one that says what to change.
 */
const VALIDATION_ABORTED = 'Validation aborted.';
const VALIDATION_ABORTED_EXPLAINED =
  'Validation aborted: the document is too costly to validate (too many fields of the same name, or fragment spreads, in one selection). Ask for each field once.';

/** Apollo Server `formatError`: the one place errors become what callers see. */
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
      // Our own coded errors and graphql-js request errors are safe as they are;
      // drop anything else that may ride in extensions (stacktrace, exception), and the
      // HTTP status they ask for: Apollo takes it out for HTTP, WebSocket and SSE have none.
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

/** One `userErrors` entry: the input path it concerns, a message for people, a code for programs. */
export interface UserError {
  field: string[] | null;
  message: string;
  code: UserErrorCode;
}

/** Input the gateway itself refuses before calling upstream, as user errors. */
export class UserInputError extends Error {
  constructor(readonly userErrors: UserError[]) {
    super(userErrors.map((e) => e.message).join('; '));
    this.name = 'UserInputError';
  }
}

/** An upstream field name -> its camelCase parts: `customer.phone_number[country]`, `payouts.0.id` -> ['customer', 'phoneNumber', 'country'], ['payouts', '0', 'id']. */
function upstreamPath(upstreamField: string): string[] {
  return upstreamField.split(/[.[\]]+/).filter(Boolean).map(snakeToCamel);
}

/**
 * Where a mutation's upstream refusals land in its input, so every mutation
 * reports them on paths its caller sent:
 * - `root`: the argument the upstream body was built from (`input`), or `null`
 *   when the body's fields are the mutation's own arguments (`sendTransaction`).
 * - `idField`: the argument naming the object (`['id']`), where an upstream 404
 *   points; `null` when the mutation names none.
 * - `mapField`: renames an upstream field's camelCase parts to the input's
 *   (`amount` -> `amountDecimal`, a start item's upstream index -> the caller's),
 *   or `null` for a field the gateway sent on its own (the error stays, unplaced).
 */
export interface UserErrorShape {
  root: string | null;
  idField?: string[] | null;
  mapField?: (parts: string[]) => string[] | null;
  /**
   * The object the mutation changes, for the message of a refused state change (the upstream's
   * 409 says no more than "conflict"): its kind, and a read of it as it is now.
   */
  object?: { kind: string; read: () => Promise<{ status: string }> };
}

/**
 * The upstream's field errors are text only (docs/upstream.md, Errors: a
 * message per field, no code), so "missing" is recognised by its wording.
 */
const MISSING_VALUE = /required|missing|blank/i;
/**
 * Likewise an id the upstream does not know ("no customer with id 9", "payout 9 not found").
 * Not a bare "no such ...": that wording fits values that are no object of the caller's too (a mode, a route).
 */
const UNKNOWN_OBJECT = /not found|does not exist|\bno [a-z_ ]+ with id\b/i;

/** Longest upstream message passed on to a caller. */
const MAX_REFLECTED_CHARS = 200;

/**
 * Upstream text shown to a caller as plain text: tags and control characters
 * go, whitespace is folded, and the length is capped.
 */
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

/**
 * A failure a mutation's caller can act on -> `userErrors`; `null` for every
 * other failure, which stays a GraphQL error (mapped by `toGraphQLError`).
 * `shape` places upstream refusals in the mutation's input (a bare root is
 * `{ root }` with the id argument `['id']`).
 */
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
