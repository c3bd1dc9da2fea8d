import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCode, REQUEST_CODES, toGraphQLError, UserErrorCode } from '../../src/errors.js';
import * as upstream from '../../src/upstream/errors.js';

/** The codes in the first column of the contract's table (docs/graphql-contract.md) whose header cell is `header`. */
function documentedCodes(header: string): string[] {
  const lines = readFileSync(new URL('../../docs/graphql-contract.md', import.meta.url), 'utf8').split('\n').map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(start, `docs/graphql-contract.md has a table headed "| ${header} |"`).toBeGreaterThanOrEqual(0);
  const codes: string[] = [];
  for (const line of lines.slice(start + 2)) {
    const match = /^\| `([A-Z_]+)` \|/.exec(line);
    if (!match) break;
    codes.push(match[1]!);
  }
  return codes;
}

describe('docs/graphql-contract.md documents exactly the codes the gateway uses', () => {
  it('GraphQL error codes (extensions.code)', () => {
    expect(documentedCodes('code').sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('request codes (Apollo Server and graphql-js, passed on as they are)', () => {
    expect(documentedCodes('request code').sort()).toEqual([...REQUEST_CODES].sort());
  });

  it('userErrors codes', () => {
    expect(documentedCodes('user error code').sort()).toEqual(Object.values(UserErrorCode).sort());
  });
});

describe('the schema documents the same codes', () => {
  it('the Query description lists every GraphQL error code, for Studio and explorer readers', () => {
    const base = readFileSync(new URL('../../schema/base.graphql', import.meta.url), 'utf8');
    const listed = [...base.matchAll(/^- `([A-Z_]+)`: /gm)].map((m) => m[1]!);
    expect(listed.sort()).toEqual(Object.values(ErrorCode).sort());
  });
});

describe('toGraphQLError: what a caller sees of each upstream failure', () => {
  const route = 'GET /v1/customers/:id';
  it.each([
    [new upstream.UpstreamAuthenticationError({ route, statusCode: 401 }), ErrorCode.UNAUTHENTICATED, 'The payments API rejected the API key.'],
    [new upstream.UpstreamPermissionError({ route, statusCode: 403 }), ErrorCode.FORBIDDEN, 'The API key may not perform this operation.'],
    [new upstream.UpstreamNotFoundError({ route, statusCode: 404 }), ErrorCode.BAD_USER_INPUT, 'The referenced object does not exist.'],
    [new upstream.UpstreamConflictError({ route, statusCode: 409 }), ErrorCode.BAD_USER_INPUT, 'The object is not in a state that allows this change.'],
    [new upstream.UpstreamTimeoutError({ route, timeoutMs: 50 }), ErrorCode.UPSTREAM_TIMEOUT, 'The payments API did not answer in time.'],
    [new upstream.UpstreamServerError({ route, statusCode: 503 }), ErrorCode.UPSTREAM_UNAVAILABLE, 'The payments API is unavailable.'],
    [new upstream.UpstreamServerError({ route, statusCode: 500 }), ErrorCode.UPSTREAM_ERROR, 'The payments API failed to answer this request.'],
    [new upstream.UpstreamInvalidResponseError({ route, detail: 'customer: id' }), ErrorCode.UPSTREAM_ERROR, 'The payments API failed to answer this request.'],
    [new upstream.UpstreamError('odd', 'unexpected_status', { route, statusCode: 405 }), ErrorCode.UPSTREAM_ERROR, 'The payments API failed to answer this request.'],
  ])('%s -> %s', (error, code, message) => {
    expect(toGraphQLError(error)).toEqual({ code, message });
  });

  it('keeps the validation message and field errors, the retry delay and the unavailability reason', () => {
    expect(toGraphQLError(new upstream.UpstreamValidationError({ route, upstreamMessage: 'Amount too small', fieldErrors: { amount: ['too small'] } }))).toEqual({
      code: ErrorCode.BAD_USER_INPUT,
      message: expect.stringContaining('Amount too small'),
      extra: { fieldErrors: { amount: ['too small'] } },
    });
    expect(toGraphQLError(new upstream.UpstreamRateLimitError({ route, retryAfterSeconds: 3 }))).toMatchObject({ code: ErrorCode.RATE_LIMITED, extra: { retryAfterSeconds: 3 } });
    for (const [systemCode, reason] of [
      ['ECONNREFUSED', 'connection_refused'],
      ['ECONNRESET', 'connection_reset'],
      ['ENOTFOUND', 'dns'],
      ['EAI_AGAIN', 'dns'],
      ['ETIMEDOUT', 'timed_out'],
      ['CERT_HAS_EXPIRED', 'tls'],
      ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
      ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
      ['EHOSTUNREACH', 'connection_failed'],
      [undefined, 'connection_failed'],
    ] as const) {
      expect(toGraphQLError(new upstream.UpstreamConnectionError({ route, ...(systemCode ? { systemCode } : {}) }))).toEqual({
        code: ErrorCode.UPSTREAM_UNAVAILABLE,
        message: 'The payments API is unavailable.',
        extra: { reason },
      });
    }
    expect(toGraphQLError(new upstream.UpstreamUnavailableError({ route, reason: 'route_saturated' }))).toMatchObject({
      code: ErrorCode.UPSTREAM_UNAVAILABLE,
      extra: { reason: 'route_saturated' },
    });
    expect(toGraphQLError(new upstream.UpstreamUnavailableError({ route, reason: 'bytes_in_flight' }))).toMatchObject({
      code: ErrorCode.UPSTREAM_UNAVAILABLE,
      message: 'Too many payments API answer bytes are being read for this key or for all callers; retry shortly.',
      extra: { reason: 'bytes_in_flight', retryAfterSeconds: 1 },
    });
  });
});
