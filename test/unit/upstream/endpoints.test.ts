/**
 * The endpoint table (src/upstream/endpoints.ts), which the client's verbs, the route labels and SPEC_ROUTES are
 * read off: the spec's sixteen endpoints are the ones it marks, and every verb takes its call options last,
 * where the table's builders say they stand.
 */
import { describe, expect, it } from 'vitest';
import { createUpstreamClient, NO_OPERATION, type PaymentsApi } from '../../../src/upstream/index.js';
import { ALL_ENDPOINTS, ENDPOINTS } from '../../../src/upstream/endpoints.js';
import { SPEC_ROUTES } from '../../../src/upstream/spec.js';
import { Decimal } from '../../../src/upstream/decimal.js';
import type { CallOptions } from '../../../src/upstream/api.js';

const dec = (digits: string) => Decimal.fromJsonNumber(digits);

/** Every verb, by `resource.verb`, called with valid arguments and the options given. */
const EVERY_VERB: Record<string, (api: PaymentsApi, opts: CallOptions) => Promise<unknown>> = {
  'transactions.retrieve': (api, opts) => api.transactions.retrieve(101, opts),
  'transactions.list': (api, opts) => api.transactions.list({ perPage: 5 }, opts),
  'transactions.search': (api, opts) => api.transactions.search({ status: 'pending' }, opts),
  'transactions.create': (api, opts) => api.transactions.create({ amount: dec('1'), currencyIso: 'XOF' }, opts),
  'transactions.update': (api, opts) => api.transactions.update(101, { status: 'canceled' }, opts),
  'transactions.createToken': (api, opts) => api.transactions.createToken(101, opts),
  'transactions.send': (api, opts) => api.transactions.send('mtn', { token: 't' }, opts),
  'payouts.retrieve': (api, opts) => api.payouts.retrieve(201, opts),
  'payouts.search': (api, opts) => api.payouts.search({}, opts),
  'payouts.create': (api, opts) => api.payouts.create({ amount: dec('1'), currencyIso: 'XOF' }, opts),
  'payouts.update': (api, opts) => api.payouts.update(201, { amount: dec('2') }, opts),
  'payouts.start': (api, opts) => api.payouts.start([{ id: 201 }], opts),
  'customers.retrieve': (api, opts) => api.customers.retrieve(7, opts),
  'customers.search': (api, opts) => api.customers.search({ email: 'a@example.com' }, opts),
  'customers.create': (api, opts) => api.customers.create({ firstname: 'A', lastname: 'B', email: 'a@example.com' }, opts),
  'currencies.retrieve': (api, opts) => api.currencies.retrieve(1, opts),
  'currencies.list': (api, opts) => api.currencies.list(opts),
  'webhooks.list': (api, opts) => api.webhooks.list(opts),
  'webhooks.retrieve': (api, opts) => api.webhooks.retrieve(3, opts),
  'events.retrieve': (api, opts) => api.events.retrieve(9, opts),
  'events.list': (api, opts) => api.events.list({ objectId: 101 }, opts),
  'logs.retrieve': (api, opts) => api.logs.retrieve(4, opts),
  'logs.list': (api, opts) => api.logs.list({ page: 2 }, opts),
  'accounts.current': (api, opts) => api.accounts.current(opts),
};

describe('the endpoint table', () => {
  it('marks exactly the spec\'s sixteen endpoints, which SPEC_ROUTES is read from', () => {
    expect(SPEC_ROUTES.size).toBe(16);
    expect([...SPEC_ROUTES].sort()).toEqual(
      [
        'PUT /v1/payouts/start',
        'PUT /v1/transactions/:id',
        'PUT /v1/payouts/:id',
        'POST /v1/customers',
        'POST /v1/payouts',
        'POST /v1/transactions/:mode',
        'GET /v1/logs/:id',
        'GET /v1/transactions/:id',
        'GET /v1/payouts/:id',
        'GET /v1/payouts/search',
        'GET /v1/customers/:id',
        'GET /v1/customers/search',
        'GET /v1/currencies/:id',
        'GET /v1/webhooks/:id',
        'GET /v1/webhooks',
        'GET /v1/events/:id',
      ].sort(),
    );
  });

  it('declares each route once, its label made of its method and pattern', () => {
    const routes = ALL_ENDPOINTS.map((e) => e.route);
    expect(new Set(routes).size).toBe(routes.length);
    for (const e of ALL_ENDPOINTS) expect(e.route).toBe(`${e.method} ${e.pattern}`);
    const verbs = Object.entries(ENDPOINTS).flatMap(([resource, table]) => Object.keys(table).map((verb) => `${resource}.${verb}`));
    expect(verbs.sort()).toEqual(Object.keys(EVERY_VERB).sort());
  });

  it('every verb takes its options last: an aborted signal given there stops the call before any I/O', async () => {
    // Nothing listens there: a call that went out would fail to connect, not with the signal's reason.
    const client = createUpstreamClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 2_000 });
    try {
      const api = client.forKey('sk_sandbox_endpoints', NO_OPERATION);
      for (const [verb, call] of Object.entries(EVERY_VERB)) {
        const controller = new AbortController();
        const reason = new Error(`stopped ${verb}`);
        controller.abort(reason);
        expect(await call(api, { signal: controller.signal }).catch((e: unknown) => e), verb).toBe(reason);
      }
      expect(client.routeStats()).toEqual({});
    } finally {
      client.close();
    }
  });
});
