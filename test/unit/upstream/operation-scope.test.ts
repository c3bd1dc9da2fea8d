/** The checks made before any I/O: the URL built with its ids validated, the body's ids, the key, the base URL. */
import { describe, expect, it } from 'vitest';
import { UpstreamAuthenticationError, UpstreamValidationError } from '../../../src/upstream/errors.js';
import { buildUrl, checkApiKey, checkBodyIds, parseBaseUrl, routeLabel, NO_OPERATION } from '../../../src/upstream/operation-scope.js';

const ROUTE = 'GET /v1/transactions/:id';
const base = parseBaseUrl('https://api.example.test/');

function fieldErrorsOf(run: () => unknown): Record<string, string[]> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamValidationError);
    return (error as UpstreamValidationError).fieldErrors;
  }
  throw new Error('no error');
}

describe('buildUrl', () => {
  it('puts the path ids in the template and the query after it, under the base without its trailing slash', () => {
    const url = buildUrl(base, '/v1/transactions/:id/send/:mode', { path: { id: 42, mode: 'mtn_ci' }, query: { page: 2, status: 'pending', skipped: undefined } }, ROUTE);
    expect(url.href).toBe('https://api.example.test/v1/transactions/42/send/mtn_ci?page=2&status=pending');
    expect(buildUrl(parseBaseUrl('http://127.0.0.1:4010/prefix//'), '/v1/currencies', {}, ROUTE).href).toBe('http://127.0.0.1:4010/prefix/v1/currencies');
  });

  it('refuses an id that is not a positive safe integer, naming the field, before any call', () => {
    for (const id of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, '42', null, undefined]) expect(fieldErrorsOf(() => buildUrl(base, '/v1/transactions/:id', { path: { id } }, ROUTE))).toEqual({ id: ['must be a positive integer'] });
    expect(fieldErrorsOf(() => buildUrl(base, '/v1/transactions', { query: { per_page: 0 } }, ROUTE))).toEqual({ per_page: ['must be a positive integer'] });
  });

  it('takes a send mode of lower-case letters, digits and underscores only: no path can be smuggled in', () => {
    for (const mode of ['MTN', 'mtn/../../admin', 'mtn ci', '', 7]) expect(fieldErrorsOf(() => buildUrl(base, '/v1/transactions/:id/send/:mode', { path: { id: 1, mode } }, ROUTE))).toEqual({ mode: ['must be lower-case letters, digits or underscores'] });
  });
});

describe('the other checks', () => {
  it('checks the ids a body carries like path ids, skipping those not given', () => {
    expect(() => checkBodyIds({ customer_id: 3, payout: undefined }, ROUTE)).not.toThrow();
    expect(() => checkBodyIds(undefined, ROUTE)).not.toThrow();
    expect(fieldErrorsOf(() => checkBodyIds({ customer_id: -3 }, ROUTE))).toEqual({ customer_id: ['must be a positive integer'] });
  });

  it('refuses a key that cannot travel in a header as the upstream would, without a call', () => {
    expect(() => checkApiKey('sk_sandbox_abc123', ROUTE)).not.toThrow();
    for (const key of ['', 'sk with space', 'sk\nnewline', 'sk_é']) expect(() => checkApiKey(key, ROUTE)).toThrow(UpstreamAuthenticationError);
  });

  it('takes an http or https base URL only, and labels a route by method and template', () => {
    expect(parseBaseUrl('http://127.0.0.1:4010').href).toBe('http://127.0.0.1:4010/');
    expect(() => parseBaseUrl('ftp://example.test')).toThrow(/http or https, got ftp:/);
    expect(() => parseBaseUrl('not a url')).toThrow();
    expect(routeLabel('POST', '/v1/payouts')).toBe('POST /v1/payouts');
    expect(Object.isFrozen(NO_OPERATION) && Object.keys(NO_OPERATION)).toEqual([]);
  });
});
