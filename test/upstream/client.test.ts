import { describe, expect, it } from 'vitest';
import { HTTP_CLIENTS, UpstreamValidationError, createUpstreamClient, routeLabel, NO_OPERATION, type PaymentsApi } from '../../src/upstream/index.js';
import { aCurrency, aCustomer, aPayout, aTransaction, aWebhook, anEvent, aLog, enveloped } from './fixtures.js';
import { TEST_KEY, useUpstreamHarness } from './harness.js';
import { Decimal } from '../../src/upstream/decimal.js';

/** Amounts travel as Decimals (src/upstream/decimal.ts). */
const dec = (text: string): Decimal => Decimal.parse(text) as Decimal;

describe('forKey', () => {
  // Checked by the type checker (npm run typecheck): the line below must stay an error. The operation's
  // gate wraps the view from outside, and must be named there (test/unit/access/upstream-budget.test.ts).
  it('cannot be called without a scope', () => {
    const neverCalled = (client: ReturnType<typeof createUpstreamClient>) => {
      // @ts-expect-error: no scope
      client.forKey(TEST_KEY);
      return client.forKey(TEST_KEY, NO_OPERATION);
    };
    expect(neverCalled).toBeTypeOf('function');
  });

  it('makes no verb per operation: every view shares one function per verb, and each view calls with its own key', async () => {
    const { startFakeUpstream } = await import('./fake-upstream.js');
    const upstream = await startFakeUpstream();
    const client = createUpstreamClient({ baseUrl: upstream.url });
    try {
      const first = client.forKey('sk_sandbox_first', NO_OPERATION);
      const second = client.forKey('sk_sandbox_second', { requestId: 'op-2' });
      expect(second.transactions.retrieve).toBe(first.transactions.retrieve);
      expect(second.customers.search).toBe(first.customers.search);
      expect(first.transactions).toBe(first.transactions);
      upstream.replyWith({ json: aTransaction() });
      await second.transactions.retrieve(101);
      await first.transactions.retrieve(101);
      expect(upstream.requests.map((r) => [r.headers.authorization, r.headers['x-request-id']])).toEqual([
        ['Bearer sk_sandbox_second', 'op-2'],
        ['Bearer sk_sandbox_first', undefined],
      ]);
    } finally {
      client.close();
      await upstream.close();
    }
  });
});

describe.each(HTTP_CLIENTS)('%s transport', (httpClient) => {
  const h = useUpstreamHarness(httpClient);

  function lastRequest() {
    const req = h.upstream.requests.at(-1);
    if (!req) throw new Error('the fake upstream received no request');
    return req;
  }

  /** Query parameters as a plain object, so expectations read like the wire. */
  function queryOf(req: { query: URLSearchParams }) {
    return Object.fromEntries(req.query.entries());
  }

  describe('headers', () => {
    it('authenticates with the key the client was bound to', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.api.transactions.retrieve(101);

      expect(lastRequest().headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    });

    it('sends each bound key on its own calls', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.client.forKey('sk_live_other', NO_OPERATION).transactions.retrieve(101);
      await h.api.transactions.retrieve(101);

      expect(h.upstream.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk_live_other', `Bearer ${TEST_KEY}`]);
    });

    it('sends the JSON accept, version and source headers', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.api.transactions.retrieve(101);

      expect(lastRequest().headers).toMatchObject({
        accept: 'application/json',
        'x-version': 'v1',
        'x-source': 'payments-graphql-gateway',
      });
    });

    it('forwards the Idempotency-Key when one is given', async () => {
      h.upstream.replyWith({ json: aPayout() });

      await h.api.payouts.create({ amount: dec('1000'), currencyIso: 'XOF' }, { idempotencyKey: 'idem-123' });

      expect(lastRequest().headers['idempotency-key']).toBe('idem-123');
    });

    it('sends no Idempotency-Key when none is given', async () => {
      h.upstream.replyWith({ json: aPayout() });

      await h.api.payouts.create({ amount: dec('1000'), currencyIso: 'XOF' });

      expect(lastRequest().headers).not.toHaveProperty('idempotency-key');
    });
  });

  describe('paths and methods', () => {
    type Case = [label: string, call: (api: PaymentsApi) => Promise<unknown>, reply: unknown, method: string, path: string];
    const cases: Case[] = [
      ['transactions.retrieve', (api) => api.transactions.retrieve(101), aTransaction(), 'GET', '/v1/transactions/101'],
      ['transactions.list', (api) => api.transactions.list(), [aTransaction()], 'GET', '/v1/transactions'],
      ['transactions.search', (api) => api.transactions.search(), [aTransaction()], 'GET', '/v1/transactions/search'],
      ['transactions.create', (api) => api.transactions.create({ amount: dec('1'), currencyIso: 'XOF' }), aTransaction(), 'POST', '/v1/transactions'],
      ['transactions.update', (api) => api.transactions.update(101, { status: 'canceled' }), aTransaction(), 'PUT', '/v1/transactions/101'],
      ['transactions.createToken', (api) => api.transactions.createToken(101), { token: 't', url: 'u' }, 'POST', '/v1/transactions/101/token'],
      ['transactions.send', (api) => api.transactions.send('mtn_ci', { token: 't' }), [], 'POST', '/v1/transactions/mtn_ci'],
      ['payouts.retrieve', (api) => api.payouts.retrieve(201), aPayout(), 'GET', '/v1/payouts/201'],
      ['payouts.search', (api) => api.payouts.search(), [aPayout()], 'GET', '/v1/payouts/search'],
      ['payouts.create', (api) => api.payouts.create({ amount: dec('1'), currencyIso: 'XOF' }), aPayout(), 'POST', '/v1/payouts'],
      ['payouts.update', (api) => api.payouts.update(201, { amount: dec('2') }), aPayout(), 'PUT', '/v1/payouts/201'],
      ['payouts.start', (api) => api.payouts.start([{ id: 201 }]), [aPayout()], 'PUT', '/v1/payouts/start'],
      ['customers.retrieve', (api) => api.customers.retrieve(7), aCustomer(), 'GET', '/v1/customers/7'],
      ['customers.search', (api) => api.customers.search(), [aCustomer()], 'GET', '/v1/customers/search'],
      ['customers.create', (api) => api.customers.create({ firstname: 'A', lastname: 'L', email: 'a@x.io' }), aCustomer(), 'POST', '/v1/customers'],
      ['currencies.retrieve', (api) => api.currencies.retrieve(4), [aCurrency({ id: 4 })], 'GET', '/v1/currencies/4'],
      ['currencies.list', (api) => api.currencies.list(), [], 'GET', '/v1/currencies'],
      ['webhooks.list', (api) => api.webhooks.list(), [], 'GET', '/v1/webhooks'],
      ['webhooks.retrieve', (api) => api.webhooks.retrieve(11), [aWebhook()], 'GET', '/v1/webhooks/11'],
      ['events.retrieve', (api) => api.events.retrieve(31), [anEvent()], 'GET', '/v1/events/31'],
      ['events.list', (api) => api.events.list(), [anEvent()], 'GET', '/v1/events'],
      ['logs.retrieve', (api) => api.logs.retrieve(41), [aLog()], 'GET', '/v1/logs/41'],
      ['logs.list', (api) => api.logs.list(), [aLog()], 'GET', '/v1/logs'],
      ['accounts.current', (api) => api.accounts.current(), enveloped('account', { id: 1 }), 'GET', '/v1/accounts'],
    ];

    it.each(cases)('%s calls %s %s', async (_label, call, reply, method, path) => {
      h.upstream.replyWith({ json: reply });

      await call(h.api);

      expect(lastRequest()).toMatchObject({ method, path });
    });

    it('keeps a path prefix of the base url', async () => {
      const prefixed = createUpstreamClient({ baseUrl: `${h.upstream.url}/api/`, httpClient });
      h.upstream.replyWith({ json: aCustomer() });

      await prefixed.forKey(TEST_KEY, NO_OPERATION).customers.retrieve(7);
      prefixed.close();

      expect(lastRequest().path).toBe('/api/v1/customers/7');
    });
  });

  describe('request bodies are the snake_case wire shapes', () => {
    it('creates a transaction for an existing customer by id', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.api.transactions.create({
        amount: dec('2500'),
        currencyIso: 'XOF',
        description: 'Order 42',
        callbackUrl: 'https://shop.example/cb',
        customer: { id: 7, email: 'ignored@example.com' },
        mode: 'mtn',
        merchantReference: 'order-42',
        customMetadata: { order: 42 },
      });

      expect(lastRequest().body).toEqual({
        amount: 2500,
        description: 'Order 42',
        callback_url: 'https://shop.example/cb',
        currency: { iso: 'XOF' },
        customer: { id: 7 },
        mode: 'mtn',
        merchant_reference: 'order-42',
        custom_metadata: { order: 42 },
      });
    });

    it('creates a transaction with an inline customer', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.api.transactions.create({
        amount: dec('100'),
        currencyIso: 'XOF',
        customer: { firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.com', phoneNumber: { number: '97000000', country: 'bj' } },
      });

      expect(lastRequest().body).toEqual({
        amount: 100,
        currency: { iso: 'XOF' },
        customer: {
          firstname: 'Ada',
          lastname: 'Lovelace',
          email: 'ada@example.com',
          phone_number: { number: '97000000', country: 'bj' },
        },
      });
    });

    it('updates a transaction with only the given fields', async () => {
      h.upstream.replyWith({ json: aTransaction() });

      await h.api.transactions.update(101, { callbackUrl: 'https://shop.example/new', status: 'canceled' });

      expect(lastRequest().body).toEqual({ callback_url: 'https://shop.example/new', status: 'canceled' });
    });

    it('sends the token and phone number to the mode path', async () => {
      h.upstream.replyWith({ json: [] });

      await h.api.transactions.send('moov_tg', { token: 'tok_1', phoneNumber: { number: '+22890000000', country: 'TG' } });

      expect(lastRequest()).toMatchObject({
        path: '/v1/transactions/moov_tg',
        body: { token: 'tok_1', phone_number: { number: '+22890000000', country: 'TG' } },
      });
    });

    it('creates a payout', async () => {
      h.upstream.replyWith({ json: aPayout() });

      await h.api.payouts.create({
        amount: dec('1000'),
        currencyIso: 'XOF',
        customer: { firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.com' },
        mode: 'mtn',
        merchantReference: 'po-1',
        customMetadata: { batch: 'b1' },
      });

      expect(lastRequest().body).toEqual({
        amount: 1000,
        currency: { iso: 'XOF' },
        customer: { firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.com' },
        mode: 'mtn',
        merchant_reference: 'po-1',
        custom_metadata: { batch: 'b1' },
      });
    });

    it('updates a payout with only the given fields', async () => {
      h.upstream.replyWith({ json: aPayout() });

      await h.api.payouts.update(201, { amount: dec('1500') });

      expect(lastRequest().body).toEqual({ amount: 1500 });
    });

    it('starts payouts wrapped in {"payouts": [...]}', async () => {
      h.upstream.replyWith({ json: [aPayout()] });

      await h.api.payouts.start([
        { id: 201 },
        { id: 202, scheduledAt: '2030-01-01T00:00:00Z', phoneNumber: { number: '97000000', country: 'BJ' } },
      ]);

      expect(lastRequest().body).toEqual({
        payouts: [
          { id: 201 },
          { id: 202, scheduled_at: '2030-01-01T00:00:00Z', phone_number: { number: '97000000', country: 'BJ' } },
        ],
      });
    });

    it('creates a customer', async () => {
      h.upstream.replyWith({ json: aCustomer() });

      await h.api.customers.create({
        firstname: 'Ada',
        lastname: 'Lovelace',
        email: 'ada@example.com',
        phoneNumber: { number: '97000000', country: 'bj' },
      });

      expect(lastRequest().body).toEqual({
        firstname: 'Ada',
        lastname: 'Lovelace',
        email: 'ada@example.com',
        phone_number: { number: '97000000', country: 'bj' },
      });
    });

    it('sends no body on reads', async () => {
      h.upstream.replyWith((req) => ({ json: aCustomer({ id: Number(req.path.split('/').pop()) }) }));

      await h.api.customers.retrieve(7);
      await h.api.customers.retrieve(8);

      expect(h.upstream.requests.map((r) => r.body)).toEqual([undefined, undefined]);
    });
  });

  describe('query strings', () => {
    it('pages a list with page and per_page', async () => {
      h.upstream.replyWith({ json: [] });

      await h.api.logs.list({ page: 3, perPage: 50 });

      expect(queryOf(lastRequest())).toEqual({ page: '3', per_page: '50' });
    });

    it('sends nothing for an unpaged list', async () => {
      h.upstream.replyWith({ json: [] });

      await h.api.transactions.list();

      expect(queryOf(lastRequest())).toEqual({});
    });

    it.each([
      ['transactions', (api: PaymentsApi, p: Parameters<PaymentsApi['transactions']['search']>[0]) => api.transactions.search(p)],
      ['payouts', (api: PaymentsApi, p: Parameters<PaymentsApi['payouts']['search']>[0]) => api.payouts.search(p)],
    ])('searches %s with filters[...] parameters', async (_resource, search) => {
      h.upstream.replyWith({ json: [] });

      await search(h.api, {
        page: 1,
        perPage: 10,
        status: 'approved',
        customerId: 7,
        createdAfter: '2024-01-01T00:00:00Z',
        createdBefore: '2024-02-01T00:00:00Z',
      });

      expect(queryOf(lastRequest())).toEqual({
        page: '1',
        per_page: '10',
        'filters[status]': 'approved',
        'filters[customer_id]': '7',
        'filters[created_after]': '2024-01-01T00:00:00Z',
        'filters[created_before]': '2024-02-01T00:00:00Z',
      });
    });

    it('searches customers by e-mail and free text', async () => {
      h.upstream.replyWith({ json: [] });

      await h.api.customers.search({ email: 'ada@example.com', query: 'ada love', createdAfter: '2024-01-01T00:00:00Z' });

      expect(queryOf(lastRequest())).toEqual({
        'filters[email]': 'ada@example.com',
        'filters[q]': 'ada love',
        'filters[created_after]': '2024-01-01T00:00:00Z',
      });
    });

    it('filters events by type and object id', async () => {
      h.upstream.replyWith({ json: [] });

      await h.api.events.list({ type: 'transaction.approved', objectId: 101, perPage: 5 });

      expect(queryOf(lastRequest())).toEqual({
        per_page: '5',
        'filters[type]': 'transaction.approved',
        'filters[object_id]': '101',
      });
    });
  });

  describe('arguments are checked before any request is sent', () => {
    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])('rejects id %s without calling', async (id) => {
      const error = await h.api.transactions.retrieve(id).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamValidationError);
      expect(error).toMatchObject({ fieldErrors: { id: ['must be a positive integer'] }, route: 'GET /v1/transactions/:id' });
      expect(h.upstream.requests).toHaveLength(0);
    });

    it.each(['MTN', '../customers', 'mtn/x', 'mtn?x=1', ''])('rejects mode %j without calling', async (mode) => {
      const error = await h.api.transactions.send(mode, { token: 't' }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamValidationError);
      expect((error as UpstreamValidationError).fieldErrors).toHaveProperty('mode');
      expect(h.upstream.requests).toHaveLength(0);
    });

    it.each([
      ['a payout to start', (api: PaymentsApi) => api.payouts.start([{ id: 201 }, { id: -5 }]), 'payouts[1].id'],
      ['an existing customer', (api: PaymentsApi) => api.transactions.create({ amount: dec('1'), currencyIso: 'XOF', customer: { id: 0 } }), 'customer.id'],
      ['a customer filter', (api: PaymentsApi) => api.transactions.search({ customerId: 1.5 }), 'filters[customer_id]'],
      ['a page number', (api: PaymentsApi) => api.events.list({ page: 0 }), 'page'],
    ])('rejects a bad id for %s without calling', async (_what, call, field) => {
      const error = await call(h.api).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamValidationError);
      expect((error as UpstreamValidationError).fieldErrors).toHaveProperty([field]);
      expect(h.upstream.requests).toHaveLength(0);
    });

    it('rejects with the caller\'s reason when the signal is already aborted, without calling', async () => {
      const controller = new AbortController();
      controller.abort(new Error('caller gave up'));

      await expect(h.api.customers.retrieve(7, { signal: controller.signal })).rejects.toThrow('caller gave up');
      expect(h.upstream.requests).toHaveLength(0);
    });
  });

  describe('routeLabel', () => {
    it('names a route by method and path pattern', () => {
      expect(routeLabel('GET', '/v1/customers/:id')).toBe('GET /v1/customers/:id');
    });
  });
});
