import { describe, expect, it } from 'vitest';
import {
  HTTP_CLIENTS,
  MAX_VALIDATION_MESSAGE_LENGTH,
  UpstreamAuthenticationError,
  UpstreamConflictError,
  UpstreamConnectionError,
  UpstreamError,
  UpstreamInvalidResponseError,
  UpstreamNotFoundError,
  UpstreamPermissionError,
  UpstreamRateLimitError,
  UpstreamRouteMissingError,
  UpstreamServerError,
  UpstreamTimeoutError,
  UpstreamValidationError,
  createUpstreamClient,
  NO_OPERATION,
} from '../../src/upstream/index.js';
import { aTransaction, enveloped } from './fixtures.js';
import { TEST_KEY, QUICK_TIMEOUT_MS, useUpstreamHarness } from './harness.js';
import type { Reply } from './fake-upstream.js';

describe.each(HTTP_CLIENTS)('%s transport', (httpClient) => {
  const h = useUpstreamHarness(httpClient);

  async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
    const error = await promise.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }

  /** An error body in the upstream's `{message, errors}` shape (docs/upstream.md, Errors). */
  function anErrorBody(overrides: Record<string, unknown> = {}) {
    return { message: 'Something went wrong', errors: {}, ...overrides };
  }

  describe('HTTP statuses', () => {
    it.each([
      [401, UpstreamAuthenticationError, 'authentication_failed'],
      [403, UpstreamPermissionError, 'permission_denied'],
      [404, UpstreamNotFoundError, 'not_found'],
      [400, UpstreamValidationError, 'validation_failed'],
      [422, UpstreamValidationError, 'validation_failed'],
      [409, UpstreamConflictError, 'conflict'],
      [429, UpstreamRateLimitError, 'rate_limited'],
      [500, UpstreamServerError, 'server_error'],
      [502, UpstreamServerError, 'server_error'],
      [503, UpstreamServerError, 'server_error'],
    ])('maps %i to %o', async (status, ErrorClass, code) => {
      h.upstream.replyWith({ status, json: anErrorBody() });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toMatchObject({ statusCode: status, code, route: 'GET /v1/customers/:id' });
    });

    it.each([
      [401, 'UpstreamAuthenticationError'],
      [403, 'UpstreamPermissionError'],
      [404, 'UpstreamNotFoundError'],
      [409, 'UpstreamConflictError'],
      [422, 'UpstreamValidationError'],
      [429, 'UpstreamRateLimitError'],
      [500, 'UpstreamServerError'],
      [405, 'UpstreamRouteMissingError'],
      [418, 'UpstreamError'],
    ])('names the error of a %i after its class, as logs and stack traces show it', async (status, name) => {
      h.upstream.replyWith({ status, json: anErrorBody() });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error.name).toBe(name);
      expect(String(error)).toMatch(new RegExp(`^${name}: Upstream`));
    });

    it('maps an unexpected status to the base class', async () => {
      // 405 was the example here until it came to mean the route is missing (below).
      h.upstream.replyWith({ status: 418, json: anErrorBody() });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error.constructor).toBe(UpstreamError);
      expect(error).toMatchObject({ statusCode: 418, code: 'unexpected_status' });
    });

    it('maps a 405 to the route missing, even on a path that names an object', async () => {
      h.upstream.replyWith({ status: 405, json: anErrorBody() });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error.constructor).toBe(UpstreamRouteMissingError);
      expect(error).toMatchObject({ statusCode: 405, code: 'route_missing', route: 'GET /v1/customers/:id', beyondSpec: false });
    });

    it('does not follow a redirect (the key must not travel elsewhere)', async () => {
      h.upstream.replyWith({ status: 302, text: '', headers: { location: 'http://127.0.0.1:1/elsewhere' } });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error).toMatchObject({ statusCode: 302, code: 'unexpected_status' });
      expect(h.upstream.requests).toHaveLength(1);
    });

    it('classifies an error status by status alone when the body is not JSON', async () => {
      h.upstream.replyWith({ status: 502, text: '<html>Bad gateway</html>' });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error).toBeInstanceOf(UpstreamServerError);
      expect(error.message).not.toContain('html');
    });

    it('carries the upstream request id', async () => {
      h.upstream.replyWith({ status: 404, json: anErrorBody(), headers: { 'x-request-id': 'req_abc' } });

      const error = await failure(h.api.payouts.retrieve(201));

      expect(error.requestId).toBe('req_abc');
    });

    it('decodes field errors and the message of a 422', async () => {
      h.upstream.replyWith({
        status: 422,
        json: anErrorBody({
          message: 'Customer creation failed',
          errors: { lastname: ['lastname field required'], email: 'email is invalid', ignored: [42] },
        }),
      });

      const error = await failure(h.api.customers.create({ firstname: 'Ada', lastname: '', email: 'nope' }));

      expect(error).toBeInstanceOf(UpstreamValidationError);
      expect(error).toMatchObject({
        upstreamMessage: 'Customer creation failed',
        fieldErrors: { lastname: ['lastname field required'], email: ['email is invalid'] },
      });
      expect(error.message).toContain('Customer creation failed');
    });

    it('caps the length of an upstream validation message', async () => {
      h.upstream.replyWith({ status: 422, json: anErrorBody({ message: 'x'.repeat(5000) }) });

      const error = (await failure(h.api.customers.create({ firstname: 'A', lastname: 'L', email: 'a@x.io' }))) as UpstreamValidationError;

      expect(error.upstreamMessage?.length).toBe(MAX_VALIDATION_MESSAGE_LENGTH);
      expect(error.message.length).toBeLessThan(MAX_VALIDATION_MESSAGE_LENGTH + 100);
    });

    it.each([
      ['delta-seconds', '7', 7],
      ['an HTTP date', () => new Date(Date.now() + 30_000).toUTCString(), 30],
    ])('reads Retry-After given as %s on a 429', async (_form, header, expected) => {
      const value = typeof header === 'function' ? header() : header;
      h.upstream.replyWith({ status: 429, json: anErrorBody(), headers: { 'retry-after': value } });

      const error = (await failure(h.api.transactions.list())) as UpstreamRateLimitError;

      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(expected - 1);
      expect(error.retryAfterSeconds).toBeLessThanOrEqual(expected);
    });

    it('leaves retryAfterSeconds unset when a 429 has no Retry-After', async () => {
      h.upstream.replyWith({ status: 429, json: anErrorBody() });

      const error = (await failure(h.api.transactions.list())) as UpstreamRateLimitError;

      expect(error.retryAfterSeconds).toBeUndefined();
    });
  });

  describe('invalid responses', () => {
    it('rejects a success body that is not JSON', async () => {
      h.upstream.replyWith({ text: '{"v1/transaction": {"id": 1, "amount": SECRET' });

      const error = await failure(h.api.transactions.retrieve(1));

      expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
      expect(error.message).toContain('transaction');
      expect(error.message).not.toContain('SECRET');
    });

    it('names the resource and failing path of a body that fails the model, never the value', async () => {
      h.upstream.replyWith({ json: enveloped('transaction', aTransaction({ amount: 'SECRET-4111111111111111' })) });

      const error = await failure(h.api.transactions.retrieve(101));

      expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
      expect(error.message).toMatch(/transaction .*amount/);
      expect(error.message).not.toContain('SECRET');
      expect(JSON.stringify(error)).not.toContain('SECRET');
    });

    it('names a nested failing path', async () => {
      h.upstream.replyWith({ json: { id: 7, phone_number: { number: null } } });

      const error = await failure(h.api.customers.retrieve(7));

      expect(error.message).toContain('phone_number.number');
    });

    it('rejects malformed page meta', async () => {
      h.upstream.replyWith({ json: enveloped('transactions', [aTransaction()], { meta: { current_page: 'one' } }) });

      const error = await failure(h.api.transactions.list());

      expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
      expect(error.message).toContain('current_page');
    });
  });

  describe('transport failures', () => {
    it('times out quickly when the upstream never answers', async () => {
      h.upstream.replyWith('hang');
      const started = Date.now();

      const error = await failure(h.quickApi.transactions.retrieve(101));

      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(error).toMatchObject({ code: 'timeout', route: 'GET /v1/transactions/:id' });
      expect(Date.now() - started).toBeLessThan(QUICK_TIMEOUT_MS + 2_000);
    });

    it('reports a reset connection', async () => {
      h.upstream.replyWith('reset');

      const error = await failure(h.api.transactions.retrieve(101));

      expect(error).toBeInstanceOf(UpstreamConnectionError);
      expect(error).toMatchObject({ code: 'connection_failed' });
    });

    it('reports a refused connection', async () => {
      const closed = createUpstreamClient({ baseUrl: 'http://127.0.0.1:1', httpClient, timeoutMs: 2_000 });

      const error = await failure(closed.forKey(TEST_KEY, NO_OPERATION).currencies.list());
      closed.close();

      expect(error).toBeInstanceOf(UpstreamConnectionError);
      expect(error).toMatchObject({ systemCode: 'ECONNREFUSED', route: 'GET /v1/currencies' });
    });

    it("rejects with the caller's reason when the caller aborts mid-request", async () => {
      h.upstream.replyWith('hang');
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('client went away')), 20);

      await expect(h.api.transactions.retrieve(101, { signal: controller.signal })).rejects.toThrow('client went away');
    });
  });

  describe('the API key never leaks into errors', () => {
    const replies: [string, Reply][] = [
      ['401', { status: 401, json: anErrorBody({ message: `Invalid key ${TEST_KEY}` }) }],
      ['403', { status: 403, json: anErrorBody({ message: `Key ${TEST_KEY} lacks permission` }) }],
      ['422 echoing the key', { status: 422, json: anErrorBody({ message: `Bad key ${TEST_KEY}`, errors: { key: [`${TEST_KEY} is wrong`] } }) }],
      ['429', { status: 429, json: anErrorBody() }],
      ['500', { status: 500, text: `stack trace with ${TEST_KEY}` }],
      ['invalid body', { json: { id: TEST_KEY } }],
      ['non-JSON body', { text: `oops ${TEST_KEY}` }],
      ['timeout', 'hang'],
      ['reset', 'reset'],
    ];

    it.each(replies)('on %s', async (_case, reply) => {
      h.upstream.replyWith(reply);

      const api = reply === 'hang' ? h.quickApi : h.api;
      const error = await failure(api.transactions.retrieve(101));

      expect(error.message).not.toContain(TEST_KEY);
      expect(JSON.stringify(error)).not.toContain(TEST_KEY);
      expect(String(error.stack)).not.toContain(TEST_KEY);
    });

    it('refuses a key that cannot be sent in a header, without calling', async () => {
      const badKey = 'sk_sandbox_with\nnewline';

      const error = await failure(h.client.forKey(badKey, NO_OPERATION).transactions.retrieve(101));

      expect(error).toBeInstanceOf(UpstreamAuthenticationError);
      expect(JSON.stringify(error)).not.toContain('newline');
      expect(h.upstream.requests).toHaveLength(0);
    });
  });
});
