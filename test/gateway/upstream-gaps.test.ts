/**
 * What the gateway answers when the upstream lacks a call beyond the spec
 * (docs/upstream.md, "Calls beyond the spec"), and when one item of a list is
 * malformed: a coded error, never INTERNAL_SERVER_ERROR, never an empty list
 * or a null passed off as "not found", and a bad item costs only its place.
 * Run against a scripted upstream over HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/server/index.js';
import { aCurrency, aTransaction, enveloped } from '../upstream/fixtures.js';
import { type FakeUpstream, type ReceivedRequest, type Reply } from '../upstream/fake-upstream.js';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.js';

const KEY = 'sk_sandbox_upstream_gaps_SECRET123';

interface GqlError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; reason?: string; parameter?: string; upstream?: { route?: string; status?: number } };
}
interface Answer<T = Record<string, unknown>> {
  data?: T | null;
  errors?: GqlError[];
}

const NOT_FOUND: Reply = { status: 404, json: { message: 'Not Found' } };

describe('the upstream without the calls beyond the spec, or with a malformed list item', () => {
  let scripted: ScriptedGateway;
  let upstream: FakeUpstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    // Every read must reach the scripted upstream: no entity cache across requests.
    scripted = await startScriptedGateway({ RATE_LIMIT_PER_MINUTE: '0', ENTITY_CACHE: 'false' });
    ({ upstream, gateway } = scripted);
  });
  beforeEach(() => {
    upstream.requests.splice(0);
  });
  afterAll(() => scripted?.stop());

  const gql = async <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<Answer<T>> => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ query, variables }),
    });
    const text = await res.text();
    expect(text).not.toContain(KEY);
    return JSON.parse(text) as Answer<T>;
  };

  /** A spec-only upstream: the spec's reads by id answer, and every route in `missing` is 404 (or `status`). */
  const specOnly = (missing: string[], status = 404) =>
    upstream.replyWith((req: ReceivedRequest): Reply => {
      if (missing.includes(`${req.method} ${req.path}`)) return status === 404 ? NOT_FOUND : { status, json: { message: 'Method Not Allowed' } };
      if (req.path.startsWith('/v1/currencies/')) return { json: [aCurrency()] };
      if (req.path === '/v1/transactions/101') return { json: enveloped('transaction', aTransaction()) };
      return NOT_FOUND;
    });

  describe('a call beyond the spec that the upstream lacks', () => {
    it('fails `transactions` with UPSTREAM_UNSUPPORTED naming GET /v1/transactions, not an empty list', async () => {
      specOnly(['GET /v1/transactions']);
      const answer = await gql('{ transactions(first: 5) { nodes { id } } }');
      expect(answer.data).toBeNull();
      expect(answer.errors).toHaveLength(1);
      expect(answer.errors![0]).toMatchObject({
        path: ['transactions'],
        message: 'The payments API does not offer GET /v1/transactions, which this field needs.',
        extensions: { code: 'UPSTREAM_UNSUPPORTED', reason: 'route_missing', upstream: { route: 'GET /v1/transactions', status: 404 } },
      });
    });

    it('fails `currencies` and a Currency reference by ISO code (both need GET /v1/currencies) with UPSTREAM_UNSUPPORTED', async () => {
      specOnly(['GET /v1/currencies']);
      const list = await gql('{ currencies { iso } }');
      expect(list.data).toBeNull();
      expect(list.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['currencies', 'UPSTREAM_UNSUPPORTED']]);

      const entities = await gql<{ _entities: ({ iso: string } | null)[] }>(
        'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Currency { iso } } }',
        { r: [{ __typename: 'Currency', iso: 'XOF' }, { __typename: 'Currency', id: '1' }] },
      );
      // The id key reads the spec's GET /v1/currencies/{id} and still answers.
      expect(entities.data!._entities).toEqual([null, { iso: 'XOF' }]);
      expect(entities.errors?.map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.upstream?.route])).toEqual([
        ['_entities.0', 'UPSTREAM_UNSUPPORTED', 'GET /v1/currencies'],
      ]);
    });

    it('tells a missing route (405) from an unknown object on the token step, and keeps a 404 by id as null', async () => {
      specOnly(['POST /v1/transactions/101/token'], 405);
      const token = await gql<{ createTransactionToken: unknown }>('mutation { createTransactionToken(id: "101") { token userErrors { code } } }');
      expect(token.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_UNSUPPORTED']);

      // A 404 on a read by id is the object unknown: null, no error.
      const read = await gql('{ transaction(id: "999") { id } known: transaction(id: "101") { id } }');
      expect(read.errors).toBeUndefined();
      expect(read.data).toEqual({ transaction: null, known: { id: '101' } });
    });

    it('never answers INTERNAL_SERVER_ERROR for a 404 or 405 on any list or search route', async () => {
      for (const status of [404, 405]) {
        specOnly(['GET /v1/transactions', 'GET /v1/transactions/search', 'GET /v1/payouts/search', 'GET /v1/customers/search', 'GET /v1/events', 'GET /v1/logs', 'GET /v1/webhooks'], status);
        const answer = await gql(`{
          a: transactions(first: 1) { totalCount } b: transactions(first: 1, filter: { status: PENDING }) { totalCount }
          c: payouts(first: 1) { totalCount } d: customers(first: 1) { totalCount } e: events(first: 1) { totalCount }
          f: logs(first: 1) { totalCount } g: webhooks { id } }`);
        expect(answer.data).toBeNull();
        const routes = (answer.errors ?? []).map((e) => [e.extensions?.code, e.extensions?.upstream?.route]);
        expect(new Set(routes.map(([code]) => code))).toEqual(new Set(['UPSTREAM_UNSUPPORTED']));
        expect(routes.length).toBeGreaterThan(0);
      }
    });
  });

  it('answers a filtered page the upstream did not filter with the matching rows only, checked by the gateway', async () => {
    upstream.replyWith({ json: enveloped('transactions', [aTransaction({ id: 2, status: 'approved' }), aTransaction({ id: 1, status: 'pending' })]) });
    const answer = await gql<{ transactions: { nodes: { id: string; status: string }[]; pageInfo: { hasNextPage: boolean } } }>(
      '{ transactions(first: 5, filter: { status: PENDING }) { nodes { id status } pageInfo { hasNextPage } } }',
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.transactions).toEqual({ nodes: [{ id: '1', status: 'PENDING' }], pageInfo: { hasNextPage: false } });
  });

  describe('one malformed item of a list', () => {
    const page = (items: unknown[]) => upstream.replyWith({ json: enveloped('transactions', items, { meta: { current_page: 1, next_page: null, per_page: 20, total_count: 3, total_pages: 1 } }) });

    it('fails only its own place: the other two transactions come back, with one UPSTREAM_ERROR at the bad item path', async () => {
      page([aTransaction({ id: 1, description: 'first' }), aTransaction({ id: 'x' }), aTransaction({ id: 3, description: 'third' })]);
      const answer = await gql<{ transactions: { totalCount: number; nodes: ({ id: string; description: string } | null)[] } }>(
        '{ transactions(first: 20) { totalCount nodes { id description } } }',
      );
      expect(answer.data!.transactions).toEqual({
        totalCount: 3,
        nodes: [{ id: '1', description: 'first' }, null, { id: '3', description: 'third' }],
      });
      expect(answer.errors).toHaveLength(1);
      expect(answer.errors![0]).toMatchObject({
        path: ['transactions', 'nodes', 1],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { route: 'GET /v1/transactions' } },
      });
      // The message is ours: it never quotes the upstream value.
      expect(answer.errors![0]!.message).not.toContain('"x"');
    });

    it('keeps the bad item edge and its cursor, with the error on its node', async () => {
      page([aTransaction({ id: 1 }), aTransaction({ id: 'x' }), aTransaction({ id: 3 })]);
      const answer = await gql<{ transactions: { edges: { cursor: string; node: { id: string } | null }[] } }>(
        '{ transactions(first: 20) { edges { cursor node { id } } } }',
      );
      expect(answer.data!.transactions.edges.map((e) => e.node?.id ?? null)).toEqual(['1', null, '3']);
      expect(answer.data!.transactions.edges.every((e) => typeof e.cursor === 'string')).toBe(true);
      expect(answer.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['transactions', 'edges', 1, 'node'], 'UPSTREAM_ERROR']]);
    });

    it('fails only its own place in a plain list (currencies), never INTERNAL_SERVER_ERROR', async () => {
      upstream.replyWith({ json: [aCurrency(), { id: 2, iso: 42 }, aCurrency({ id: 3, iso: 'GNF' })] });
      const answer = await gql<{ currencies: ({ iso: string } | null)[] }>('{ currencies { iso } }');
      expect(answer.data!.currencies).toEqual([{ iso: 'XOF' }, null, { iso: 'GNF' }]);
      expect(answer.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['currencies', 1], 'UPSTREAM_ERROR']]);
    });
  });
});
