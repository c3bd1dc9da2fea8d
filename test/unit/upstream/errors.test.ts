/** Each upstream answer that failed, as its typed error: the status, the body's messages, the key never echoed. */
import { describe, expect, it } from 'vitest';
import {
  MAX_VALIDATION_MESSAGE_LENGTH,
  UpstreamConnectionError,
  UpstreamRateLimitError,
  UpstreamResponseTooLargeError,
  UpstreamValidationError,
  connectionReason,
  decodeErrorBody,
  errorFromResponse,
} from '../../../src/upstream/errors.js';

const KEY = 'sk_sandbox_Zq8TESTKEYdoNotLeak123';
const init = { route: 'POST /v1/transactions', statusCode: 422, requestId: 'req-1' };
const fail = (status: number, body = '', retryAfter?: string) => errorFromResponse(status, body, retryAfter, { ...init, statusCode: status }, KEY);

describe('errorFromResponse', () => {
  it('gives each status its code, route and request id', () => {
    const codes = [401, 403, 404, 409, 429, 500, 503, 418].map((status) => fail(status).code);
    expect(codes).toEqual(['authentication_failed', 'permission_denied', 'not_found', 'conflict', 'rate_limited', 'server_error', 'server_error', 'unexpected_status']);
    const error = fail(404);
    expect([error.name, error.route, error.statusCode, error.requestId]).toEqual(['UpstreamNotFoundError', 'POST /v1/transactions', 404, 'req-1']);
    expect(fail(418).message).toBe('Upstream answered with unexpected status 418 on POST /v1/transactions');
  });

  it('keeps a validation answer\'s messages, with the key redacted and the message on one capped line', () => {
    const body = JSON.stringify({ message: `bad key ${KEY}\n  twice ${KEY} ${'x'.repeat(400)}`, errors: { amount: ['must be positive', 3], phone: `not ${KEY}`, empty: [] } });
    const error = fail(422, body) as UpstreamValidationError;
    expect(error).toBeInstanceOf(UpstreamValidationError);
    expect(error.fieldErrors).toEqual({ amount: ['must be positive'], phone: ['not [redacted]'] });
    expect(error.upstreamMessage).toMatch(/^bad key \[redacted\] twice \[redacted\] x+…$/);
    expect(error.upstreamMessage).toHaveLength(MAX_VALIDATION_MESSAGE_LENGTH);
    expect(error.message).not.toContain(KEY);
    expect((fail(400, 'not json') as UpstreamValidationError).fieldErrors).toEqual({});
  });

  it('reads a refusal for size from a 413, or a 503 that names it, with the ceiling it gives', () => {
    expect(fail(413, '{"max_bytes":1048576}')).toMatchObject({ code: 'response_too_large', maxBytes: 1_048_576 });
    expect(fail(503, '{"code":"page_too_large","max_bytes":2048}')).toBeInstanceOf(UpstreamResponseTooLargeError);
    expect((fail(413, '{"max_bytes":-5}') as UpstreamResponseTooLargeError).maxBytes).toBe(0);
    expect(fail(503, '{"code":"maintenance"}').code).toBe('server_error');
  });

  it('reads Retry-After as seconds or as a date, and ignores one it cannot read', () => {
    expect((fail(429, '', '7') as UpstreamRateLimitError).retryAfterSeconds).toBe(7);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect((fail(429, '', inTenSeconds) as UpstreamRateLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(8);
    expect((fail(429, '', inTenSeconds) as UpstreamRateLimitError).retryAfterSeconds).toBeLessThanOrEqual(10);
    expect((fail(429, '', 'Thu, 01 Jan 1970 00:00:00 GMT') as UpstreamRateLimitError).retryAfterSeconds).toBe(0);
    for (const unreadable of [undefined, '', 'soon']) expect((fail(429, '', unreadable) as UpstreamRateLimitError).retryAfterSeconds).toBeUndefined();
  });
});

describe('the pieces', () => {
  it('decodes an error body to nothing unless it is a JSON object', () => {
    for (const text of ['', 'oops', '[1]', 'null', '"text"']) expect(decodeErrorBody(text)).toEqual({ fieldErrors: {} });
    expect(decodeErrorBody('{"message":"no","errors":{"a":"one"}}')).toEqual({ message: 'no', fieldErrors: { a: ['one'] } });
  });

  it('names the reason a connection failed, TLS included', () => {
    const reasons = ['ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ESOCKETTIMEDOUT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'SELF_SIGNED_CERT_IN_CHAIN', 'EHOSTUNREACH', undefined].map(connectionReason);
    expect(reasons).toEqual(['connection_refused', 'connection_reset', 'dns', 'dns', 'timed_out', 'tls', 'tls', 'connection_failed', 'connection_failed']);
    const error = new UpstreamConnectionError({ route: 'GET /v1/currencies', systemCode: 'ECONNRESET' });
    expect([error.message, error.connectionReason]).toEqual(['Connection to upstream failed (ECONNRESET) on GET /v1/currencies', 'connection_reset']);
    expect(new UpstreamConnectionError({ route: 'GET /v1/currencies' }).message).toBe('Connection to upstream failed on GET /v1/currencies');
  });
});
