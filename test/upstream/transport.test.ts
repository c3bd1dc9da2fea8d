/**
 * What a transport must do that got did for us, held against both
 * (src/upstream/transport.ts): the node:http transport does each by hand.
 * A time-out or an abort must free the socket, so the fake upstream reports
 * which connection carried each request and when it closed.
 */
import http from 'node:http';
import https from 'node:https';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  HTTP_CLIENTS,
  UpstreamConnectionError,
  UpstreamError,
  UpstreamResponseTooLargeError,
  UpstreamTimeoutError,
  createUpstreamClient,
  type UpstreamClient,
  NO_OPERATION,
} from '../../src/upstream/index.js';
import { Decimal } from '../../src/upstream/decimal.js';
import { createGotTransport } from '../../src/upstream/transport-got.js';
import { createNodeTransport } from '../../src/upstream/transport-node.js';
import { startFakeUpstream, type FakeUpstream, type ReceivedRequest } from './fake-upstream.js';
import { aCustomer, aPayout, aTransaction, enveloped } from './fixtures.js';
import { ONE_ATTEMPT, QUICK_TIMEOUT_MS, TEST_KEY, useUpstreamHarness } from './harness.js';

/** Resolves when `promise` does, or fails the test after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms))]);
}

async function firstRequestOf(upstream: FakeUpstream): Promise<ReceivedRequest> {
  await vi.waitFor(() => expect(upstream.requests).toHaveLength(1), { timeout: 2_000, interval: 5 });
  return upstream.requests[0]!;
}

describe.each(HTTP_CLIENTS)('%s transport', (httpClient) => {
  const h = useUpstreamHarness(httpClient);
  const clients: UpstreamClient[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  const fresh = (baseUrl = h.upstream.url) => {
    const c = createUpstreamClient({ baseUrl, httpClient, timeoutMs: QUICK_TIMEOUT_MS, resilience: ONE_ATTEMPT });
    clients.push(c);
    return c;
  };

  it('is the transport the client was asked for', () => {
    expect(h.client.httpClient).toBe(httpClient);
  });

  describe('one time-out over the whole request', () => {
    it('times out when the upstream sends the headers and stalls the body, and destroys that socket', async () => {
      h.upstream.replyWith('stall-body');
      const started = Date.now();

      const error = await h.quickApi.transactions.retrieve(101).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(error).toMatchObject({ code: 'timeout', route: 'GET /v1/transactions/:id' });
      // The attempt's time-out, less what it waited for its route's slot (a millisecond or so on a busy machine).
      const named = Number(/within (\d+) ms/.exec((error as Error).message)?.[1]);
      expect(named).toBeGreaterThan(QUICK_TIMEOUT_MS - 50);
      expect(named).toBeLessThanOrEqual(QUICK_TIMEOUT_MS);
      expect(Date.now() - started).toBeLessThan(QUICK_TIMEOUT_MS + 1_000);
      await within(h.upstream.requests[0]!.connectionClosed, 1_000, 'the socket was not destroyed');
    });
  });

  describe("the caller's abort", () => {
    it("rejects with the caller's reason when it comes mid-body, and destroys the socket", async () => {
      h.upstream.replyWith('stall-body');
      const controller = new AbortController();
      const reason = new Error('client went away');

      const call = h.api.transactions.retrieve(101, { signal: controller.signal }).catch((e: unknown) => e);
      const received = await firstRequestOf(h.upstream);
      // Let the headers and the first bytes of the body arrive before aborting.
      await new Promise((r) => setTimeout(r, 50));
      controller.abort(reason);

      expect(await within(call, 1_000, 'the abort did not end the call')).toBe(reason);
      await within(received.connectionClosed, 1_000, 'the socket was not destroyed');
    });
  });

  describe('what the observer is told (the status_class of the metrics)', () => {
    it.each([
      ['an answer', { json: aTransaction() } as const, { status: 200 }],
      ['a stalled body', 'stall-body' as const, { failure: 'timeout' }],
      ['a reset mid-body', 'reset-mid-body' as const, { failure: 'connection', reason: 'connection_reset' }],
    ])('names %s by its status or its failure', async (_what, reply, expected) => {
      const c = fresh();
      const ended: unknown[] = [];
      c.observe({ attempt: () => ({ headers: {}, end: (result) => ended.push(result) }), retry: () => undefined, retryBudgetExhausted: () => undefined });
      h.upstream.replyWith(reply);

      await c.forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101).catch(() => undefined);

      expect(ended).toEqual([expected]);
    });

    it('names an abort as aborted', async () => {
      const c = fresh();
      const ended: unknown[] = [];
      c.observe({ attempt: () => ({ headers: {}, end: (result) => ended.push(result) }), retry: () => undefined, retryBudgetExhausted: () => undefined });
      h.upstream.replyWith('stall-body');
      const controller = new AbortController();

      const call = c.forKey(TEST_KEY, NO_OPERATION).transactions.retrieve(101, { signal: controller.signal }).catch(() => undefined);
      await firstRequestOf(h.upstream);
      controller.abort(new Error('gone'));
      await call;

      expect(ended).toEqual([{ failure: 'aborted' }]);
    });
  });

  describe('connection failures', () => {
    it('reports a connection reset mid-body as a connection failure', async () => {
      h.upstream.replyWith('reset-mid-body');

      const error = await h.api.transactions.retrieve(101).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamConnectionError);
      expect(error).toMatchObject({ code: 'connection_failed', route: 'GET /v1/transactions/:id' });
      expect(JSON.stringify(error)).not.toContain(TEST_KEY);
    });
  });

  describe('redirects are never followed (the key must not travel elsewhere)', () => {
    let elsewhere: FakeUpstream;
    beforeAll(async () => {
      elsewhere = await startFakeUpstream();
      elsewhere.replyWith({ json: aCustomer() });
    });
    afterAll(() => elsewhere.close());

    it.each([301, 302, 303, 307, 308])('answers a %i as an unexpected status and calls nowhere else', async (status) => {
      h.upstream.replyWith({ status, text: '', headers: { location: `${elsewhere.url}/v1/customers/7` } });

      const error = await h.api.customers.retrieve(7).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ statusCode: status, code: 'unexpected_status' });
      expect(h.upstream.requests).toHaveLength(1);
      expect(elsewhere.requests).toHaveLength(0);
    });
  });

  describe('keep-alive', () => {
    it('sends sequential calls over one socket', async () => {
      const c = fresh().forKey(TEST_KEY, NO_OPERATION);
      h.upstream.replyWith((req) => ({ json: aCustomer({ id: Number(req.path.split('/').pop()) }) }));

      for (const id of [1, 2, 3, 4]) await c.customers.retrieve(id);

      expect(h.upstream.requests.map((r) => r.connection)).toEqual(Array(4).fill(h.upstream.requests[0]!.connection));
    });
  });

  describe('what goes on the wire', () => {
    it('sends the default user agent', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.api.transactions.retrieve(101);

      expect(h.upstream.requests[0]!.headers['user-agent']).toBe('payments-graphql-gateway');
    });

    it('sends a JSON body with its content type and its length in bytes, amounts as their digits', async () => {
      h.upstream.replyWith({ json: enveloped('payout', aPayout()) });

      await h.api.payouts.create({ amount: Decimal.parse('9007199254740993') as Decimal, currencyIso: 'XOF', merchantReference: 'reçu-№1 🙂' });

      const [req] = h.upstream.requests;
      expect(req!.headers['content-type']).toBe('application/json');
      expect(req!.headers['content-length']).toBe(String(Buffer.byteLength(req!.rawBody)));
      expect(req!.rawBody).toContain('"amount":9007199254740993');
      expect(req!.body).toMatchObject({ merchant_reference: 'reçu-№1 🙂' });
    });

    it("sends the operation's request id and the observer's trace headers", async () => {
      const c = fresh();
      c.observe({ attempt: () => ({ headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, end: () => undefined }), retry: () => undefined, retryBudgetExhausted: () => undefined });
      h.upstream.replyWith({ json: aTransaction() });

      await c.forKey(TEST_KEY, { requestId: 'support-4711' }).transactions.retrieve(101);

      expect(h.upstream.requests[0]!.headers).toMatchObject({
        'x-request-id': 'support-4711',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        authorization: `Bearer ${TEST_KEY}`,
      });
    });

    it('reads the answer as UTF-8 text', async () => {
      h.upstream.replyWith({ json: enveloped('customer', aCustomer({ firstname: 'Adéwálé', lastname: '№ 🙂' })) });

      await expect(h.api.customers.retrieve(7)).resolves.toMatchObject({ firstname: 'Adéwálé', lastname: '№ 🙂' });
    });
  });
});

describe('node transport: agents', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('sends an https URL through a keep-alive https agent, and an http URL through an http one', async () => {
    const httpsRequest = vi.spyOn(https, 'request');
    const httpRequest = vi.spyOn(http, 'request');
    const upstream = await startFakeUpstream();
    upstream.replyWith({ json: aCustomer() });
    // TLS against a plain HTTP server fails; what matters is which module and agent were asked.
    const secure = createUpstreamClient({ baseUrl: upstream.url.replace('http:', 'https:'), httpClient: 'node', timeoutMs: 2_000, resilience: ONE_ATTEMPT });
    const plain = createUpstreamClient({ baseUrl: upstream.url, httpClient: 'node', timeoutMs: 2_000, resilience: ONE_ATTEMPT });
    try {
      const error = await secure.forKey(TEST_KEY, NO_OPERATION).customers.retrieve(7).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamConnectionError);
      expect(JSON.stringify(error)).not.toContain(TEST_KEY);
      expect(httpsRequest).toHaveBeenCalledTimes(1);
      const secureAgent = (httpsRequest.mock.calls[0]![1] as https.RequestOptions).agent;
      expect(secureAgent).toBeInstanceOf(https.Agent);
      expect(secureAgent).toMatchObject({ keepAlive: true, maxSockets: 256 });

      await plain.forKey(TEST_KEY, NO_OPERATION).customers.retrieve(7);
      const plainCalls = httpRequest.mock.calls.filter(([url]) => String(url).startsWith(upstream.url));
      expect(plainCalls).toHaveLength(1);
      const plainAgent = (plainCalls[0]![1] as http.RequestOptions).agent;
      expect(plainAgent).toBeInstanceOf(http.Agent);
      expect(plainAgent).not.toBeInstanceOf(https.Agent);
      expect(plainAgent).toMatchObject({ keepAlive: true, maxSockets: 256 });
    } finally {
      secure.close();
      plain.close();
      await upstream.close();
    }
  });
});

describe.each(HTTP_CLIENTS)('%s transport: answer size', (httpClient) => {
  it('refuses an answer longer than its byte cap, counted across chunks, as too large; a roomier cap reads it', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Several chunks, as a large answer comes: the cap is counted across them, in bytes (é is two).
      for (let i = 0; i < 10; i++) res.write('é'.repeat(500));
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1/logs/1`);
    const create = httpClient === 'node' ? createNodeTransport : createGotTransport;
    const capped = create({ timeoutMs: 2_000, maxResponseBytes: 9_999 });
    const roomy = create({ timeoutMs: 2_000, maxResponseBytes: 10_000 });
    try {
      const request = { route: 'GET /v1/logs/:id', method: 'GET' as const, headers: {}, timeoutMs: 2_000 };
      const error = await capped.send(url, request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamResponseTooLargeError);
      expect(error).toMatchObject({ code: 'response_too_large', maxBytes: 9_999, route: 'GET /v1/logs/:id' });
      expect((await roomy.send(url, request)).body).toBe('é'.repeat(5_000));
    } finally {
      capped.close();
      roomy.close();
      server.close();
    }
  });
});
