/**
 * What callers see of a failure (src/errors.ts), mapping by mapping: the formatter that masks everything it does
 * not know, the upstream failures with their own wording, the upstream text that reaches a caller (plain, folded,
 * capped), and the user errors a mutation's refusal becomes, placed on the caller's own input paths.
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { badUserInput, createErrorFormatter, forbidden, toGraphQLError, toUserErrors, unauthenticated, UserErrorCode, UserInputError } from '../../src/errors.js';
import * as upstream from '../../src/upstream/errors.js';

const route = 'POST /v1/transactions';

describe('the coded errors the gateway raises itself', () => {
  it('UNAUTHENTICATED asks for 401, FORBIDDEN for 403', () => {
    expect(unauthenticated('no').extensions).toEqual({ code: 'UNAUTHENTICATED', http: { status: 401 } });
    expect(forbidden('no').extensions).toEqual({ code: 'FORBIDDEN', http: { status: 403 } });
  });

  it('BAD_USER_INPUT names the argument only when there is one', () => {
    expect(badUserInput('bad', 'first').extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'first' });
    expect(badUserInput('bad').extensions).toEqual({ code: 'BAD_USER_INPUT' });
    expect(badUserInput('bad', '').extensions).toEqual({ code: 'BAD_USER_INPUT' });
  });
});

describe('toGraphQLError: the failures worded from their fields', () => {
  it('a missing route names it and says why the field cannot be served', () => {
    expect(toGraphQLError(new upstream.UpstreamRouteMissingError({ route: 'GET /v1/payouts', beyondSpec: false }))).toEqual({
      code: 'UPSTREAM_UNSUPPORTED',
      message: 'The payments API does not offer GET /v1/payouts, which this field needs.',
      extra: { reason: 'route_missing' },
    });
  });

  it('an ignored parameter names the parameter and the route', () => {
    expect(toGraphQLError(new upstream.UpstreamParameterIgnoredError({ route: 'GET /v1/transactions', parameter: 'status' }))).toEqual({
      code: 'UPSTREAM_UNSUPPORTED',
      message: 'The payments API ignored status on GET /v1/transactions, so its answer cannot be served for this field.',
      extra: { reason: 'parameter_ignored', parameter: 'status' },
    });
  });

  it('a rate limit says to retry later, with the delay only when the upstream gave one', () => {
    expect(toGraphQLError(new upstream.UpstreamRateLimitError({ route, retryAfterSeconds: 0 }))).toEqual({
      code: 'RATE_LIMITED',
      message: 'The payments API is rate limiting this key; retry later.',
      extra: { retryAfterSeconds: 0 },
    });
    expect(toGraphQLError(new upstream.UpstreamRateLimitError({ route }))).toEqual({
      code: 'RATE_LIMITED',
      message: 'The payments API is rate limiting this key; retry later.',
      extra: {},
    });
  });

  it('an open circuit and a saturated route each say what is happening', () => {
    expect(toGraphQLError(new upstream.UpstreamUnavailableError({ route, reason: 'circuit_open' }))).toEqual({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'The payments API is failing on this route; calls are paused for a short while.',
      extra: { reason: 'circuit_open' },
    });
    expect(toGraphQLError(new upstream.UpstreamUnavailableError({ route, reason: 'route_saturated' }))).toEqual({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'Too many calls to this payments API route are in flight; retry shortly.',
      extra: { reason: 'route_saturated' },
    });
  });

  it('hands out a copy: a caller changing its answer changes no other answer', () => {
    const error = new upstream.UpstreamTimeoutError({ route, timeoutMs: 5 });
    const first = toGraphQLError(error);
    first.message = 'changed';
    expect(toGraphQLError(error).message).toBe('The payments API did not answer in time.');
    const unavailable = toGraphQLError(new upstream.UpstreamServerError({ route, statusCode: 503 }));
    unavailable.message = 'changed';
    expect(toGraphQLError(new upstream.UpstreamServerError({ route, statusCode: 503 })).message).toBe('The payments API is unavailable.');
    const failed = toGraphQLError(new upstream.UpstreamServerError({ route, statusCode: 500 }));
    failed.message = 'changed';
    expect(toGraphQLError(new upstream.UpstreamServerError({ route, statusCode: 500 })).message).toBe('The payments API failed to answer this request.');
  });
});

describe('upstream text shown to a caller', () => {
  const message = (text: string) => toUserErrors(new upstream.UpstreamValidationError({ route, fieldErrors: { amount: [text] } }), { root: 'input' })![0]!.message;

  it('drops tags and control characters and folds whitespace', () => {
    expect(message('  <b>Amount</b>\u0000 is\n\n  <script>x</script>too   small\t')).toBe('Amount is x too small');
  });

  it('a control character between words parts them, as a space would', () => {
    expect(message('Amount\u0007too\u001bsmall')).toBe('Amount too small');
  });

  it('keeps text of 200 characters whole, and cuts a longer one to 199 and an ellipsis', () => {
    expect(message('a'.repeat(200))).toBe('a'.repeat(200));
    expect(message('a'.repeat(201))).toBe(`${'a'.repeat(199)}…`);
  });

  it('the validation message of a GraphQL error is the same plain text', () => {
    const mapped = toGraphQLError(new upstream.UpstreamValidationError({ route, upstreamMessage: 'Amount <i>too</i> small' }));
    expect(mapped.message).toBe(`Upstream validation failed on ${route}: Amount too small`);
  });
});

describe('toUserErrors', () => {
  it('passes on the gateway\'s own input errors as they are, their message joined', () => {
    const errors = [
      { field: ['input', 'amount'], message: 'too small', code: UserErrorCode.Invalid },
      { field: null, message: 'no currency', code: UserErrorCode.Required },
    ];
    const error = new UserInputError(errors);
    expect(error.message).toBe('too small; no currency');
    expect(error.name).toBe('UserInputError');
    expect(toUserErrors(error, { root: 'input' })).toBe(errors);
  });

  it('places each upstream field error on the caller\'s path, in camelCase, one entry per message', () => {
    const error = new upstream.UpstreamValidationError({
      route,
      fieldErrors: { 'customer.phone_number[country]': ['is required', 'must be two letters'], 'payouts.0.id': ['payout 9 not found'] },
    });
    expect(toUserErrors(error, { root: 'input' })).toEqual([
      { field: ['input', 'customer', 'phoneNumber', 'country'], message: 'is required', code: 'REQUIRED' },
      { field: ['input', 'customer', 'phoneNumber', 'country'], message: 'must be two letters', code: 'INVALID' },
      { field: ['input', 'payouts', '0', 'id'], message: 'payout 9 not found', code: 'NOT_FOUND' },
    ]);
  });

  it('without a root, the field is the mutation\'s own argument; mapField renames it, or leaves it unplaced', () => {
    const error = new upstream.UpstreamValidationError({ route, fieldErrors: { amount: ['must be positive'], mode: ['unsupported'] } });
    const mapField = (parts: string[]) => (parts[0] === 'amount' ? ['amountDecimal'] : null);
    expect(toUserErrors(error, { root: null, mapField })).toEqual([
      { field: ['amountDecimal'], message: 'must be positive', code: 'INVALID' },
      { field: null, message: 'unsupported', code: 'INVALID' },
    ]);
    expect(toUserErrors(error, { root: null })![0]!.field).toEqual(['amount']);
    // Under a root too, a field the gateway sent on its own stays unplaced.
    expect(toUserErrors(error, { root: 'input', mapField })).toEqual([
      { field: ['input', 'amountDecimal'], message: 'must be positive', code: 'INVALID' },
      { field: null, message: 'unsupported', code: 'INVALID' },
    ]);
  });

  it.each([
    ['is required', 'REQUIRED'],
    ['MISSING value', 'REQUIRED'],
    ['may not be blank', 'REQUIRED'],
    ['customer not found', 'NOT_FOUND'],
    ['the payout does not exist', 'NOT_FOUND'],
    ['No customer with id 9', 'NOT_FOUND'],
    ['no such mode', 'INVALID'],
    ['nobody with identity', 'INVALID'],
    ['must be positive', 'INVALID'],
  ])('%j is coded %s', (text, code) => {
    const [entry] = toUserErrors(new upstream.UpstreamValidationError({ route, fieldErrors: { x: [text] } }), { root: null })!;
    expect(entry!.code).toBe(code);
  });

  it('a refusal that names no field is UNKNOWN, with the upstream\'s message when it gave one', () => {
    expect(toUserErrors(new upstream.UpstreamValidationError({ route, upstreamMessage: 'Bad <b>request</b>' }), { root: 'input' })).toEqual([
      { field: null, message: 'Bad request', code: 'UNKNOWN' },
    ]);
    expect(toUserErrors(new upstream.UpstreamValidationError({ route }), { root: 'input' })).toEqual([
      { field: null, message: 'The payments API refused the input.', code: 'UNKNOWN' },
    ]);
  });

  it('an unknown object points at the id argument (["id"] unless the mutation names another, or none)', () => {
    const error = new upstream.UpstreamNotFoundError({ route, statusCode: 404 });
    const entry = { message: 'No such object in this account.', code: 'NOT_FOUND' };
    expect(toUserErrors(error, { root: null })).toEqual([{ field: ['id'], ...entry }]);
    expect(toUserErrors(error, { root: null, idField: ['input', 'payoutId'] })).toEqual([{ field: ['input', 'payoutId'], ...entry }]);
    expect(toUserErrors(error, { root: null, idField: null })).toEqual([{ field: null, ...entry }]);
  });

  it('a conflict is INVALID_STATE, unplaced, in words for a form rather than the route', () => {
    expect(toUserErrors(new upstream.UpstreamConflictError({ route, statusCode: 409 }), { root: 'input' })).toEqual([
      { field: null, message: 'The object is not in a status that allows this change.', code: 'INVALID_STATE' },
    ]);
  });

  it('any other failure is no user error', () => {
    expect(toUserErrors(new upstream.UpstreamServerError({ route, statusCode: 500 }), { root: 'input' })).toBeNull();
    expect(toUserErrors(new Error('boom'), { root: 'input' })).toBeNull();
  });
});

describe('createErrorFormatter', () => {
  const at = { locations: [{ line: 1, column: 3 }], path: ['transaction'] };
  function formatter(requestMessage?: (m: string) => string) {
    const internal: [unknown, unknown][] = [];
    const format = createErrorFormatter({ onInternalError: (original, raised) => void internal.push([original, raised]), ...(requestMessage ? { requestMessage } : {}) });
    return { format, internal };
  }
  const formatted = (message: string, extensions?: Record<string, unknown>): GraphQLFormattedError => ({ message, ...at, ...(extensions ? { extensions } : {}) });

  it('maps an upstream failure a resolver threw, keeping where it happened and naming the route and status', () => {
    const { format, internal } = formatter();
    const cause = new upstream.UpstreamRateLimitError({ route, statusCode: 429, retryAfterSeconds: 2 });
    const raised = new GraphQLError(cause.message, { originalError: cause, path: ['transaction'] });
    expect(format(formatted(cause.message, { code: 'INTERNAL_SERVER_ERROR' }), raised)).toEqual({
      ...at,
      message: 'The payments API is rate limiting this key; retry later.',
      extensions: { code: 'RATE_LIMITED', upstream: { route, status: 429 }, retryAfterSeconds: 2 },
    });
    // Thrown bare (outside a resolver), the same.
    expect(format(formatted(cause.message), cause)).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
    expect(internal).toEqual([]);
  });

  it('passes on the gateway\'s own codes without stack, exception or HTTP status', () => {
    const { format } = formatter((m) => `request: ${m}`);
    const own = formatted('slow down', { code: 'RATE_LIMITED', retryAfterSeconds: 3, stacktrace: ['at x'], exception: { x: 1 }, http: { status: 429 } });
    expect(format(own, new GraphQLError('slow down'))).toEqual({ ...at, message: 'slow down', extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 3 } });
  });

  it('rewrites the message of request errors only, and explains an aborted validation', () => {
    const { format } = formatter((m) => `request: ${m}`);
    expect(format(formatted('Cannot query field "x".', { code: 'GRAPHQL_VALIDATION_FAILED' }), new GraphQLError('x'))).toEqual({
      ...at,
      message: 'request: Cannot query field "x".',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect(format(formatted('Validation aborted.', { code: 'GRAPHQL_VALIDATION_FAILED' }), new GraphQLError('x')).message).toBe(
      'request: Validation aborted: the document is too costly to validate (too many fields of the same name, or fragment spreads, in one selection). Ask for each field once.',
    );
    expect(format(formatted('Validation aborted.', { code: 'BAD_USER_INPUT' }), new GraphQLError('x')).message).toMatch(/^Validation aborted: the document is too costly/);
    expect(formatter().format(formatted('as is', { code: 'BAD_REQUEST' }), new GraphQLError('x')).message).toBe('as is');
  });

  it('a value a scalar refused (a plain GraphQL error, no cause, no path) is BAD_USER_INPUT, its message kept', () => {
    const { format, internal } = formatter();
    expect(format(formatted('Invalid email', { stacktrace: ['at y'] }), new GraphQLError('Invalid email'))).toEqual({
      ...at,
      message: 'Invalid email',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(internal).toEqual([]);
  });

  it('masks everything else, and tells the logs the cause and the error as raised', () => {
    const { format, internal } = formatter();
    const masked = { ...at, message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
    const cause = new Error('db password is hunter2');
    const inResolver = new GraphQLError(cause.message, { originalError: cause, path: ['transaction'] });
    expect(format(formatted(cause.message, { code: 'INTERNAL_SERVER_ERROR' }), inResolver)).toEqual(masked);
    const withPath = new GraphQLError('secret detail', { path: ['x'] });
    expect(format(formatted('secret detail'), withPath)).toEqual(masked);
    expect(format(formatted('odd', { code: 'SOMETHING_ELSE' }), 'a string')).toEqual(masked);
    expect(format(formatted('odd', { code: 42 }), null)).toEqual(masked);
    expect(internal).toEqual([
      [cause, inResolver],
      [withPath, withPath],
      ['a string', 'a string'],
      [null, null],
    ]);
  });
});
