/**
 * Hive Gateway's response cache, run for real in front of the gateway with
 * the configuration of docs/routers.md ("Hive Gateway"): it keeps what the
 * gateway's Cache-Control allows (a final transaction), keeps nothing the
 * gateway marks `no-store` (a pending one), keeps each caller's answers apart
 * (`private`: the session is the caller's Authorization), and drops an entity
 * when the gateway pushes its invalidation to Hive (hive-invalidation.ts).
 * "Upstream" here is what reaches the payments subgraph: a recording proxy
 * between Hive and the gateway.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { composeSupergraph, startRecordingProxy, type RecordingProxy } from '../federation/router.js';
import { eventually, postWebhook, setUpstreamStatus, startRealtimeStack, transactionEvent, type RealtimeStack } from '../realtime/support.js';
import { factories, type RestObject } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { createHiveCache, PAYMENTS_SDL, PROPAGATE_AUTHORIZATION, startHiveServer, type HiveServer } from './hive.js';
import { usePaymentsNoStore, useRouterInvalidation, type HiveKeyValueCache } from './hive-invalidation.js';

const READ = 'query Read($id: ID!) { transaction(id: $id) { id status amount } }';

interface Read {
  data?: { transaction: { id: string; status: string; amount: number } | null } | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describeWith('hive-gateway', "Hive Gateway's response cache with the gateway's hints and invalidations", () => {
  const routerKey = randomBytes(24).toString('hex');
  const [keyA, keyB] = [newKey('hivecacheA'), newKey('hivecacheB')];
  let stack: RealtimeStack;
  let payments: RecordingProxy;
  let hive: HiveServer;

  const read = async (key: string, id: string | number): Promise<Read> => {
    const res = await fetch(hive.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: READ, variables: { id: String(id) } }),
    });
    return (await res.json()) as Read;
  };
  const subgraphCalls = () => payments.requests.length;
  const invalidations = () => hive.seen.filter((r) => r.path === '/invalidation' && r.status === 200).length;
  /** A transaction of `key` declined upstream (a final state); the emulator forwards no webhooks here, so the gateway hears nothing. */
  const finalTransaction = async (key: string): Promise<RestObject> => {
    const transaction = await factories(stack.emulator, key).transaction();
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id as number, 'declined');
    return transaction;
  };
  const accountIdOf = async (key: string): Promise<number> => {
    const body = (await factories(stack.emulator, key).rest('GET', '/v1/accounts')) as Record<string, unknown>;
    return ((body['v1/accounts'] ?? body) as { id: number }[])[0]!.id;
  };

  beforeAll(async () => {
    hive = await startHiveServer();
    // Webhooks are posted by the tests themselves, so each test drives one way the gateway learns of a change.
    stack = await startRealtimeStack({
      forward: false,
      env: { ROUTER_INVALIDATION_URL: `http://127.0.0.1:${hive.port}/invalidation`, ROUTER_INVALIDATION_KEY: routerKey, RATE_LIMIT_PER_MINUTE: '0' },
    });
    payments = await startRecordingProxy(`http://127.0.0.1:${stack.gateway.port}/graphql`);
    await hive.serve({
      supergraph: composeSupergraph([{ name: 'payments', url: payments.url, sdl: PAYMENTS_SDL }]),
      propagateHeaders: PROPAGATE_AUTHORIZATION,
      cache: await createHiveCache(),
      responseCaching: {
        // `private` answers: one cache per caller's key (Hive hashes it into the cache key).
        session: (request: Request) => request.headers.get('authorization'),
        // A fallback only: the gateway's max-age (or no-store, read as max-age=0) is shorter.
        ttl: 60_000,
      },
      plugins: (ctx: { cache: HiveKeyValueCache }) => [usePaymentsNoStore(), useRouterInvalidation({ cache: ctx.cache, key: routerKey })],
    });
  });
  afterAll(async () => {
    await hive?.stop();
    await payments?.stop();
    await stack?.stop();
  });

  it('answers a final transaction read twice with one subgraph call', async () => {
    const transaction = await finalTransaction(keyA);
    const before = subgraphCalls();
    const first = await read(keyA, transaction.id as number);
    const second = await read(keyA, transaction.id as number);
    expect(first).toEqual({ data: { transaction: { id: String(transaction.id), status: 'DECLINED', amount: transaction.amount } } });
    expect(second).toEqual(first);
    expect(subgraphCalls() - before).toBe(1);
  });

  it('keeps nothing the gateway marks no-store: a pending transaction is read from the subgraph each time', async () => {
    const transaction = await factories(stack.emulator, keyA).transaction();
    const before = subgraphCalls();
    expect((await read(keyA, transaction.id as number)).data?.transaction?.status).toBe('PENDING');
    expect((await read(keyA, transaction.id as number)).data?.transaction?.status).toBe('PENDING');
    expect(subgraphCalls() - before).toBe(2);
  });

  it("never gives one key's cached answer to another key", async () => {
    const transaction = await finalTransaction(keyA);
    expect((await read(keyA, transaction.id as number)).data?.transaction?.status).toBe('DECLINED');
    const before = subgraphCalls();
    // Key B asks for A's transaction: the subgraph is asked with B's key, and B's account has no such transaction.
    const asB = await read(keyB, transaction.id as number);
    expect(asB.data?.transaction ?? null).toBeNull();
    expect(subgraphCalls() - before).toBe(1);
    expect(payments.requests.at(-1)!.authorization).toBe(`Bearer ${keyB}`);
  });

  it("drops a cached transaction when the gateway learns of a change, and the next read shows the new state", async () => {
    const transaction = await finalTransaction(keyA);
    expect((await read(keyA, transaction.id as number)).data?.transaction?.status).toBe('DECLINED');
    const cached = subgraphCalls();
    expect((await read(keyA, transaction.id as number)).data?.transaction?.status).toBe('DECLINED');
    expect(subgraphCalls()).toBe(cached);

    // The upstream reports a change (here the operator's late approval) by signed webhook; the gateway pushes the tag to Hive.
    const pushed = invalidations();
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id as number, 'approved');
    const event = transactionEvent({ accountId: await accountIdOf(keyA), transaction: { ...transaction, status: 'approved', updated_at: new Date().toISOString() } });
    expect((await postWebhook(stack.gateway.port, event, { secret: stack.secret })).status).toBe(200);
    await eventually(async () => invalidations(), (n) => n > pushed, 5000);

    const before = subgraphCalls();
    expect((await read(keyA, transaction.id as number)).data?.transaction).toEqual({ id: String(transaction.id), status: 'APPROVED', amount: transaction.amount });
    expect(subgraphCalls() - before).toBe(1);
  });

  it("drops a cached transaction changed by the gateway's own mutation sent past Hive", async () => {
    const transaction = await finalTransaction(keyA);
    const id = String(transaction.id);
    const readDescription = async () => {
      const res = await fetch(hive.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${keyA}` },
        body: JSON.stringify({ query: 'query ($id: ID!) { transaction(id: $id) { id status description } }', variables: { id } }),
      });
      return ((await res.json()) as { data: { transaction: { description: string | null } } }).data.transaction.description;
    };
    const before = await readDescription();
    const cached = subgraphCalls();
    expect(await readDescription()).toBe(before);
    expect(subgraphCalls()).toBe(cached);

    // A back office edits it through the gateway directly, not through Hive: Hive only hears of it from the gateway.
    const pushed = invalidations();
    const edited = await stack.gql<{ updateTransaction: { userErrors: unknown[] } }>(
      'mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "Order 1042, corrected" }) { userErrors { code } } }',
      { id },
      keyA,
    );
    expect(edited.data?.updateTransaction.userErrors).toEqual([]);
    await eventually(async () => invalidations(), (n) => n > pushed, 5000);

    expect(await readDescription()).toBe('Order 1042, corrected');
    expect(subgraphCalls()).toBe(cached + 1);
  });

  it('refuses an invalidation without the shared key, and keeps the cached answer', async () => {
    const transaction = await finalTransaction(keyA);
    await read(keyA, transaction.id as number);
    const body = JSON.stringify([{ kind: 'cache_tag', subgraphs: ['payments'], cache_tag: `transaction-${transaction.id}` }]);
    const url = `http://127.0.0.1:${hive.port}/invalidation`;
    const wrong = await fetch(url, { method: 'POST', headers: { authorization: 'not-the-key', 'content-type': 'application/json' }, body });
    expect(wrong.status).toBe(401);
    const malformed = await fetch(url, { method: 'POST', headers: { authorization: routerKey, 'content-type': 'application/json' }, body: '[{"kind":"cache_tag","cache_tag":"everything"}]' });
    expect(malformed.status).toBe(400);
    // A body past the cap with no length given, that never ends: refused once the cap is passed, not read to its end.
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`[${' '.repeat(70 * 1024)}`));
      },
    });
    const oversized = await fetch(url, { method: 'POST', headers: { authorization: routerKey, 'content-type': 'application/json' }, body: endless, duplex: 'half', signal: AbortSignal.timeout(3000) } as RequestInit);
    expect(oversized.status).toBe(413);
    const before = subgraphCalls();
    await read(keyA, transaction.id as number);
    expect(subgraphCalls() - before).toBe(0);
  });
});
