/**
 * The calls beyond the spec, derived from the client itself: every verb of
 * `PaymentsApi` is called against an upstream that answers 405 to all, the
 * route each one names is classed against the spec's sixteen endpoints, and
 * the result must be the table of docs/upstream.md, "Calls beyond the spec".
 * Then what a 404 means, route by route.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  HTTP_CLIENTS,
  UpstreamNotFoundError,
  UpstreamParameterIgnoredError,
  UpstreamRouteMissingError,
  type PaymentsApi,
} from '../../src/upstream/index.js';
import { SPEC_ROUTES } from '../../src/upstream/spec.js';
import { Decimal } from '../../src/upstream/decimal.js';
import { ENDPOINTS } from '../../src/upstream/endpoints.js';
import { anEvent, aPageMeta, aTransaction, enveloped } from './fixtures.js';
import { useUpstreamHarness } from './harness.js';

describe.each(HTTP_CLIENTS)('%s transport', (httpClient) => {
  const h = useUpstreamHarness(httpClient);
  const dec = (digits: string) => Decimal.fromJsonNumber(digits);

  /** One call of every verb, by `resource.verb`. */
  const EVERY_VERB: Record<string, (api: PaymentsApi) => Promise<unknown>> = {
    'transactions.retrieve': (api) => api.transactions.retrieve(101),
    'transactions.list': (api) => api.transactions.list(),
    'transactions.search': (api) => api.transactions.search({ status: 'pending' }),
    'transactions.create': (api) => api.transactions.create({ amount: dec('1'), currencyIso: 'XOF' }),
    'transactions.update': (api) => api.transactions.update(101, { status: 'canceled' }),
    'transactions.createToken': (api) => api.transactions.createToken(101),
    'transactions.send': (api) => api.transactions.send('mtn', { token: 't' }),
    'payouts.retrieve': (api) => api.payouts.retrieve(201),
    'payouts.search': (api) => api.payouts.search(),
    'payouts.create': (api) => api.payouts.create({ amount: dec('1'), currencyIso: 'XOF' }),
    'payouts.update': (api) => api.payouts.update(201, { amount: dec('2') }),
    'payouts.start': (api) => api.payouts.start([{ id: 201 }]),
    'customers.retrieve': (api) => api.customers.retrieve(7),
    'customers.search': (api) => api.customers.search(),
    'customers.create': (api) => api.customers.create({ firstname: 'A', lastname: 'L', email: 'a@x.io' }),
    'currencies.retrieve': (api) => api.currencies.retrieve(1),
    'currencies.list': (api) => api.currencies.list(),
    'webhooks.list': (api) => api.webhooks.list(),
    'webhooks.retrieve': (api) => api.webhooks.retrieve(11),
    'events.retrieve': (api) => api.events.retrieve(31),
    'events.list': (api) => api.events.list(),
    'logs.retrieve': (api) => api.logs.retrieve(41),
    'logs.list': (api) => api.logs.list(),
    'accounts.current': (api) => api.accounts.current(),
  };

  /** `METHOD /path` of the first cell of each row of the docs table, `{id}` written `:id` as the client does. */
  function documentedBeyondSpec(): string[] {
    const doc = readFileSync(new URL('../../docs/upstream.md', import.meta.url), 'utf8');
    const section = doc.split('\n## Calls beyond the spec\n')[1]!.split('\n## ')[0]!;
    return section
      .split('\n')
      .map((line) => /^\| `(GET|POST|PUT|DELETE) (\/v1\/[^`]*)`/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => `${m[1]} ${m[2]!.replace(/\{(\w+)\}/g, ':$1')}`);
  }

  describe('calls beyond the spec', () => {
    it('are exactly the routes docs/upstream.md lists, and every one of the spec\'s sixteen is used', async () => {
      // The API's verbs are the table's (client.ts makes each from its entry): read off the table, since a view's verbs are its prototype's.
      const verbs = Object.entries(ENDPOINTS).flatMap(([resource, methods]) => Object.keys(methods).map((verb) => `${resource}.${verb}`));
      // A new verb must be added above, so that its route is classed too.
      expect(Object.keys(EVERY_VERB).sort()).toEqual(verbs.sort());

      h.upstream.replyWith({ status: 405, json: { message: 'Method Not Allowed' } });
      const beyond = new Set<string>();
      const spec = new Set<string>();
      for (const call of Object.values(EVERY_VERB)) {
        const error = await call(h.api).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(UpstreamRouteMissingError);
        const missing = error as UpstreamRouteMissingError;
        (missing.beyondSpec ? beyond : spec).add(missing.route);
        expect(missing.beyondSpec).toBe(!SPEC_ROUTES.has(missing.route));
      }
      expect([...beyond].sort()).toEqual([...new Set(documentedBeyondSpec())].sort());
      expect([...spec].sort()).toEqual([...SPEC_ROUTES].sort());
    });
  });

  describe('a 404 means the route is missing only where no object is named', () => {
    it.each<[string, (api: PaymentsApi) => Promise<unknown>, typeof UpstreamNotFoundError | typeof UpstreamRouteMissingError]>([
      ['a list (GET /v1/transactions)', (api) => api.transactions.list(), UpstreamRouteMissingError],
      ['the currency list', (api) => api.currencies.list(), UpstreamRouteMissingError],
      ["a spec search (GET /v1/payouts/search)", (api) => api.payouts.search(), UpstreamRouteMissingError],
      ['a create that names no customer', (api) => api.transactions.create({ amount: dec('1'), currencyIso: 'XOF' }), UpstreamRouteMissingError],
      ['a read by id', (api) => api.transactions.retrieve(101), UpstreamNotFoundError],
      ['a currency by id (the spec endpoint 13)', (api) => api.currencies.retrieve(1), UpstreamNotFoundError],
      ['the token step, whose path names the transaction', (api) => api.transactions.createToken(101), UpstreamNotFoundError],
      ['a create naming a customer by id', (api) => api.transactions.create({ amount: dec('1'), currencyIso: 'XOF', customer: { id: 7 } }), UpstreamNotFoundError],
      ['a start naming payouts by id', (api) => api.payouts.start([{ id: 201 }]), UpstreamNotFoundError],
    ])('%s', async (_label, call, expected) => {
      h.upstream.replyWith({ status: 404, json: { message: 'Not Found' } });
      const error = await call(h.api).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(expected);
      // The two are distinct: a missing route must never pass for an unknown object.
      if (expected === UpstreamRouteMissingError) expect(error).not.toBeInstanceOf(UpstreamNotFoundError);
    });
  });

  describe('a page that shows a page parameter beyond the spec was ignored', () => {
    const list = (name: string, items: unknown[], meta?: Record<string, unknown>) => enveloped(name, items, meta ? { meta } : {});

    it.each<[string, (api: PaymentsApi) => Promise<unknown>, unknown, string]>([
      ['the page size', (api) => api.transactions.list({ page: 1, perPage: 1 }), list('transactions', [aTransaction(), aTransaction({ id: 2 })]), 'per_page'],
      ['the page', (api) => api.transactions.list({ page: 3, perPage: 1 }), list('transactions', [aTransaction()], aPageMeta({ current_page: 1 })), 'page'],
    ])('fails on %s', async (_label, call, reply, parameter) => {
      h.upstream.replyWith({ json: reply });
      const error = await call(h.api).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamParameterIgnoredError);
      expect(error).toMatchObject({ parameter, code: 'parameter_ignored' });
    });

    // Filters are the gateway's to check on every row (src/payments/filters.ts): the client hands
    // the page over as the upstream sent it, and the connection drops what does not match.
    it.each<[string, (api: PaymentsApi) => Promise<{ items: unknown[] }>, unknown]>([
      ['a page with items the filter excludes', (api) => api.transactions.search({ status: 'pending' }), list('transactions', [aTransaction({ status: 'pending' }), aTransaction({ id: 2, status: 'approved' })])],
      ['an event page of other types and objects', (api) => api.events.list({ type: 'transaction.approved', objectId: 101 }), list('events', [anEvent({ type: 'payout.sent', object_id: 102 })])],
      ['an empty page whatever page it claims', (api) => api.transactions.list({ page: 9, perPage: 5 }), list('transactions', [], aPageMeta({ current_page: 2 }))],
      ['a malformed item, which is its own error', (api) => api.transactions.search({ status: 'pending' }), list('transactions', [{ id: 'x', status: 'approved' }])],
    ])('accepts %s', async (_label, call, reply) => {
      h.upstream.replyWith({ json: reply });
      const page = await call(h.api);
      expect(page.items).toHaveLength((reply as Record<string, unknown[]>)[Object.keys(reply as object)[0]!]!.length);
    });
  });
});
