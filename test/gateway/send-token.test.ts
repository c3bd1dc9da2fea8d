/**
 * The token of a send belongs to the transaction. The payments API sends
 * whichever transaction the token names (the emulator does the same), so
 * `sendTransaction(id: X, token: <Y's token>)` must not prompt the payer for Y
 * while answering, evicting and invalidating X: it is refused, and nothing is
 * sent. Gateway, emulator and a stand-in router as servers over HTTP.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const TOKEN_ROUTE = 'POST /v1/transactions/:id/token';
const SEND_ROUTE = 'POST /v1/transactions/:mode';
const SEND = `mutation ($id: ID!, $token: String) {
  sendTransaction(id: $id, mode: "mtn", token: $token, phoneNumber: { number: "64000001", country: "BJ" }) {
    transaction { id } paymentIntents { transactionKey } userErrors { field code message }
  }
}`;

interface SendAnswer {
  sendTransaction: {
    transaction: { id: string } | null;
    paymentIntents: { transactionKey: string }[];
    userErrors: { field: string[] | null; code: string; message: string }[];
  };
}

/** Records the cache tags a router is told to drop. */
async function standInRouter() {
  const tags: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      for (const item of JSON.parse(Buffer.concat(chunks).toString('utf8')) as { cache_tag: string }[]) tags.push(item.cache_tag);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"count":1}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/invalidation`,
    tags,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the token of a send belongs to the transaction', () => {
  let stack: Stack;
  let router: Awaited<ReturnType<typeof standInRouter>>;
  const key = newKey('send-token');
  const make = () => factories(stack.emulator, key);

  beforeAll(async () => {
    router = await standInRouter();
    // Sends stay pending for the whole test, so a wrongly sent transaction is still visible as sent.
    stack = await startStack({ emulator: { settleMs: 60_000 }, env: { RATE_LIMIT_PER_MINUTE: '0', ROUTER_INVALIDATION_URL: router.url, ROUTER_INVALIDATION_KEY: 'router-shared-key-0123456789' } });
  });
  afterAll(async () => {
    await stack.stop();
    await router.close();
  });
  beforeEach(() => {
    router.tags.length = 0;
  });

  const tokenOf = async (id: number) => {
    const res = await stack.gql<{ createTransactionToken: { token: string } }>('mutation ($id: ID!) { createTransactionToken(id: $id) { token } }', { id: String(id) }, key);
    return res.data!.createTransactionToken.token;
  };
  const read = async (id: number) => ((await make().rest('GET', `/v1/transactions/${id}`)) as { 'v1/transaction': Record<string, unknown> })['v1/transaction'];

  it('the emulator, as the payments API, sends the transaction its token names, whatever else the caller meant', async () => {
    const [x, y] = [await make().transaction(), await make().transaction()];
    const yToken = ((await make().rest('POST', `/v1/transactions/${y.id}/token`)) as { token: string }).token;
    await make().rest('POST', '/v1/transactions/mtn', { token: yToken, phone_number: { number: '64000001', country: 'bj' } });
    expect((await read(y.id)).mode).toBe('mtn');
    expect((await read(x.id)).mode ?? null).toBeNull();
  });

  it('refuses another transaction\'s token as INVALID on token: no send, neither transaction touched, nothing evicted', async () => {
    const [x, y] = [await make().transaction(), await make().transaction()];
    const yToken = await tokenOf(y.id);
    await stack.resetCounts();
    router.tags.length = 0;

    const res = await stack.gql<SendAnswer>(SEND, { id: String(x.id), token: yToken }, key);

    expect(res.errors).toBeUndefined();
    expect(res.data!.sendTransaction).toMatchObject({ transaction: null, paymentIntents: [], userErrors: [{ field: ['token'], code: 'INVALID' }] });
    expect(res.data!.sendTransaction.userErrors[0]!.message).toMatch(/not the token of this transaction/);
    expect(await stack.upstreamCalls(SEND_ROUTE)).toBe(0);
    expect(await stack.upstreamCalls(TOKEN_ROUTE)).toBe(1);
    for (const t of [x, y]) expect(await read(t.id)).toMatchObject({ status: 'pending', payment_method_id: null });
    await pause(150);
    expect(router.tags).toEqual([]);
  });

  it('sends with the transaction\'s own token, and answers and invalidates that transaction', async () => {
    const x = await make().transaction();
    const xToken = await tokenOf(x.id);
    await stack.resetCounts();
    router.tags.length = 0;

    const res = await stack.gql<SendAnswer>(SEND, { id: String(x.id), token: xToken }, key);

    expect(res.data!.sendTransaction).toEqual({ transaction: { id: String(x.id) }, paymentIntents: [{ transactionKey: x.transaction_key }], userErrors: [] });
    expect(await stack.upstreamCalls(SEND_ROUTE)).toBe(1);
    expect((await read(x.id)).mode).toBe('mtn');
    await pause(150);
    expect(router.tags).toEqual([`transaction-${x.id}`]);
  });
});
