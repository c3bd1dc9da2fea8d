/**
 * The gateway tells a router's response cache what changed, the moment it
 * knows: a verified webhook or its own mutation makes a POST to
 * ROUTER_INVALIDATION_URL in Apollo Router's invalidation shape, with the
 * shared key as the Authorization header, retried when the router fails; an
 * unverified webhook makes none. A stand-in router records what it receives.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { postWebhook } from '../realtime/support.js';
import { accountIdOf, objectEvent } from './cache-support.js';

const SECRET = 'whsec_router_invalidation';
const ROUTER_KEY = 'router-shared-key-0123456789';

interface Received {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

/** A stand-in for the router's invalidation endpoint: records each request, and fails the next `failures` with 503. */
async function standInRouter() {
  const received: Received[] = [];
  let failures = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
      });
      if (failures > 0) {
        failures -= 1;
        res.writeHead(503).end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"count":1}');
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/invalidation`,
    received,
    failNext: (n: number) => void (failures = n),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const until = async (check: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

const tag = (cacheTag: string) => [{ kind: 'cache_tag', subgraphs: ['payments'], cache_tag: cacheTag }];

describe('router invalidation', () => {
  let router: Awaited<ReturnType<typeof standInRouter>>;
  let stack: Stack;
  const key = newKey('router-inv');
  let make: ReturnType<typeof factories>;
  let customer: RestObject;
  let transaction: RestObject;

  beforeAll(async () => {
    router = await standInRouter();
    stack = await startStack({ env: { WEBHOOK_SECRETS: SECRET, ROUTER_INVALIDATION_URL: router.url, ROUTER_INVALIDATION_KEY: ROUTER_KEY, RATE_LIMIT_PER_MINUTE: '0' } });
    make = factories(stack.emulator, key);
    customer = await make.customer();
    transaction = await make.transaction({ customer: { id: customer.id } });
  });
  afterAll(async () => {
    await stack.stop();
    await router.close();
  });
  beforeEach(() => {
    router.received.length = 0;
  });

  it('pushes the object a verified webhook names, in Apollo Router\'s shape, with the shared key', async () => {
    const webhook = await postWebhook(stack.gateway.port, objectEvent('customer', await accountIdOf(make), customer), { secret: SECRET });
    expect(webhook.status).toBe(200);
    await until(() => router.received.length > 0);
    expect(router.received).toEqual([
      { method: 'POST', path: '/invalidation', authorization: ROUTER_KEY, contentType: 'application/json', body: tag(`customer-${customer.id}`) },
    ]);
  });

  it('pushes nothing for a webhook whose signature does not verify', async () => {
    const forged = await postWebhook(stack.gateway.port, objectEvent('customer', await accountIdOf(make), customer), { secret: 'not-the-secret' });
    expect(forged.status).toBe(401);
    // A verified one sent after it is the first the router hears of.
    await postWebhook(stack.gateway.port, objectEvent('transaction', await accountIdOf(make), transaction), { secret: SECRET });
    await until(() => router.received.length > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(router.received.map((r) => r.body)).toEqual([tag(`transaction-${transaction.id}`)]);
  });

  it('pushes what a mutation through the gateway changed', async () => {
    const update = await stack.gql<{ updateTransaction: { userErrors: unknown[] } }>(
      'mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "changed" }) { userErrors { message } } }',
      { id: String(transaction.id) },
      key,
    );
    expect(update.data!.updateTransaction.userErrors).toEqual([]);
    await until(() => router.received.length > 0);
    expect(router.received.map((r) => r.body)).toEqual([tag(`transaction-${transaction.id}`)]);
  });

  it('retries a router that fails, and counts the outcomes', async () => {
    const metric = async (outcome: string) => {
      const text = await (await fetch(new URL('/metrics', stack.gateway.url))).text();
      const line = text.split('\n').find((l) => l.startsWith(`gateway_router_invalidations_total{outcome="${outcome}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const [sentBefore, retriedBefore] = [await metric('sent'), await metric('retried')];
    router.failNext(2);
    await postWebhook(stack.gateway.port, objectEvent('customer', await accountIdOf(make), customer), { secret: SECRET });
    await until(() => router.received.length >= 3);
    expect(router.received.map((r) => r.body)).toEqual([1, 2, 3].map(() => tag(`customer-${customer.id}`)));
    await until(() => false, 100);
    expect(await metric('retried')).toBe(retriedBefore + 2);
    expect(await metric('sent')).toBe(sentBefore + 1);
  });

  it('tags the answers a router may keep, as its invalidations name them', async () => {
    const final = await make.transaction({ customer: { id: customer.id } });
    await make.rest('PUT', `/v1/transactions/${final.id}`, { status: 'canceled' });
    const post = (query: string, variables: Record<string, unknown>) =>
      fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
      }).then((r) => r.json() as Promise<{ extensions?: Record<string, unknown> }>);
    const root = await post('query ($id: ID!) { transaction(id: $id) { id status } }', { id: String(final.id) });
    expect(root.extensions?.apolloCacheTags).toEqual([`transaction-${final.id}`]);
    const entities = await post('query ($r: [_Any!]!) { _entities(representations: $r) { ... on Transaction { status } } }', {
      r: [{ __typename: 'Transaction', id: String(final.id) }],
    });
    expect(entities.extensions?.apolloEntityCacheTags).toEqual([[`transaction-${final.id}`]]);
  });
});
