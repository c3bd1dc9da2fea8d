/**
 * A merchant revokes a leaked key. From the first 401 the upstream answers for it, on any call and any
 * instance, the key loses access everywhere within seconds: cached reads refused, live subscriptions (WebSocket
 * and SSE) ended with a clear error, new connections refused. A revocation the gateway never saw takes effect
 * within KEY_REVALIDATE_MS: an idle key is proven again before the entity cache serves it, and a key with live
 * streams but no other traffic is proven again by the gateway itself, before its proof lapses.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { eventually, setUpstreamStatus, startRealtimeStack, subscribe, wsClient, type RealtimeStack } from '../realtime/support.js';

const PAYMENT_EVENT = 'subscription { paymentEvent { id type } }';
const READ = 'query ($id: ID!) { transaction(id: $id) { id status customer { email phoneNumber { number } } } }';
const LIST = '{ transactions(first: 1) { edges { node { id } } } }';

async function revoke(emulatorUrl: string, apiKey: string): Promise<void> {
  const res = await fetch(`${emulatorUrl}/_emulator/keys/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey }) });
  expect(res.status).toBe(200);
}

const upstreamHits = async (stack: RealtimeStack) => ((await (await fetch(`${stack.emulator.url}/_emulator/stats`)).json()) as { total: number }).total;

/** A final (canceled) transaction of the key's, read once through the gateway so the entity cache holds it. */
async function cachedFinalTransaction(stack: RealtimeStack, key: string): Promise<string> {
  const f = factories(stack.emulator, key);
  const customer = await f.customer();
  const transaction = await f.transaction({ customer: { id: customer.id } });
  await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'canceled');
  const id = String(transaction.id);
  const first = await stack.gql<{ transaction: { status: string } }>(READ, { id }, key);
  expect(first.data?.transaction.status, JSON.stringify(first)).toBe('CANCELED');
  // The cancellation's webhook evicts the object when it arrives: read until a read costs no upstream call.
  await eventually(async () => {
    const before = await upstreamHits(stack);
    expect((await stack.gql(READ, { id }, key)).errors).toBeUndefined();
    return (await upstreamHits(stack)) - before;
  }, (calls) => calls === 0);
  return id;
}

function sseStream(stack: RealtimeStack, key: string) {
  const client = createSseClient({ url: `http://127.0.0.1:${stack.gateway.port}/graphql`, headers: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
  const outcome = (async () => {
    try {
      for await (const result of client.iterate({ query: PAYMENT_EVENT })) {
        if (result.errors) return { ended: 'error' as const, errors: result.errors };
      }
      return { ended: 'complete' as const };
    } catch (error) {
      return { ended: 'thrown' as const, error: String(error) };
    }
  })();
  return { client, outcome };
}


describe('a key the upstream refuses loses access everywhere', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { REJECTED_KEY_TTL_MS: '300', KEY_REVALIDATE_MS: '60000' } });
  });
  afterAll(() => stack?.stop());

  it('ends its live WebSocket and SSE streams, refuses new connections and its cached objects, and spares other keys', async () => {
    const [key, other] = [newKey('leaked'), newKey('bystander')];
    const id = await cachedFinalTransaction(stack, key);
    const before = await upstreamHits(stack);
    expect((await stack.gql(READ, { id }, key)).errors).toBeUndefined();
    expect(await upstreamHits(stack)).toBe(before); // served from the entity cache

    const ws = wsClient(stack.wsUrl, key);
    await ws.connected;
    const live = subscribe(ws.client, PAYMENT_EVENT);
    const sse = sseStream(stack, key);
    const bystander = wsClient(stack.wsUrl, other);
    await bystander.connected;
    const bystanderEvents = subscribe<{ paymentEvent: { type: string } }>(bystander.client, PAYMENT_EVENT);
    await eventually(() => stack.health(), (h) => h.subscriptions.subscriptions >= 3);

    await revoke(stack.emulator.url, key);
    // Any call that reaches the upstream with the key: here a list, which the cache never answers.
    const refused = await stack.gql(LIST, undefined, key);
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const closed = await Promise.race([ws.closed, new Promise((r) => setTimeout(() => r('still open'), 3000))]);
    expect(closed).toMatchObject({ code: 4401 });
    const sseEnd = await Promise.race([sse.outcome, new Promise((r) => setTimeout(() => r('still open'), 3000))]);
    expect(sseEnd).not.toBe('still open');
    expect(JSON.stringify(sseEnd)).toMatch(/UNAUTHENTICATED|401/);
    void live;
    sse.client.dispose();

    const again = wsClient(stack.wsUrl, key);
    expect(await again.closed).toMatchObject({ code: 4401 });
    // The cached final object, customer email and phone included, is not served: now, and after the
    // brief memory of the refusal is gone (the key must then be proven again, and the upstream refuses it).
    expect((await stack.gql(READ, { id }, key)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await new Promise((r) => setTimeout(r, 400));
    const later = await stack.gql<{ transaction: unknown }>(READ, { id }, key);
    expect(later.data?.transaction ?? null).toBeNull();
    expect(later.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    // Another key keeps its stream and its reads.
    const tx = await factories(stack.emulator, other).transaction({ amount: 500 });
    await bystanderEvents.nth(1);
    expect((await stack.gql(READ, { id: String(tx.id) }, other)).errors).toBeUndefined();
    await bystander.client.dispose();
  });
});

describe('a revocation the gateway never saw', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { KEY_REVALIDATE_MS: '500' } });
  });
  afterAll(() => stack?.stop());

  it('stops the entity cache from serving the key once KEY_REVALIDATE_MS has passed', async () => {
    const key = newKey('idle');
    const id = await cachedFinalTransaction(stack, key);
    await revoke(stack.emulator.url, key);
    await new Promise((r) => setTimeout(r, 600));
    const before = await upstreamHits(stack);
    const read = await stack.gql<{ transaction: unknown }>(READ, { id }, key);
    expect(read.data?.transaction ?? null).toBeNull();
    expect(read.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await upstreamHits(stack)).toBeGreaterThan(before);
  });

  it.each([503, 429])('takes no %i for proof: a proxy or a limiter may answer it before the key is looked at', async (status) => {
    const key = newKey(`proxy-${status}`);
    const id = await cachedFinalTransaction(stack, key);
    await revoke(stack.emulator.url, key);
    await new Promise((r) => setTimeout(r, 600));
    // Every attempt of the list meets the fault (retries included): the key is never looked at.
    const res = await fetch(`${stack.emulator.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ route: '*', status }) });
    expect(res.status).toBe(201);
    try {
      const listed = await stack.gql(LIST, undefined, key);
      expect(listed.errors?.[0]?.extensions?.code).not.toBe('UNAUTHENTICATED');
    } finally {
      await fetch(`${stack.emulator.url}/_emulator/faults`, { method: 'DELETE' });
    }
    const read = await stack.gql<{ transaction: unknown }>(READ, { id }, key);
    expect(read.data?.transaction ?? null).toBeNull();
    expect(read.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('replays no stored mutation result to the key once revoked', async () => {
    const key = newKey('replay');
    const create = () =>
      fetch(`http://127.0.0.1:${stack.gateway.port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': 'create-once' },
        body: JSON.stringify({ query: 'mutation { createCustomer(input: { firstname: "Ama", lastname: "Mensah", email: "ama@example.com" }) { customer { id email } userErrors { code } } }' }),
      }).then((r) => r.json() as Promise<{ data?: { createCustomer: { customer: { email: string } | null } } | null; errors?: { extensions?: { code?: string } }[] }>);
    const first = await create();
    expect(first.data?.createCustomer.customer?.email).toBe('ama@example.com');
    await revoke(stack.emulator.url, key);
    await new Promise((r) => setTimeout(r, 600));
    const replay = await create();
    expect(JSON.stringify(replay)).not.toContain('ama@example.com');
    expect(replay.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('keeps serving a key in use from the cache between proofs: one upstream call per interval, not per read', async () => {
    const key = newKey('busy');
    const id = await cachedFinalTransaction(stack, key);
    const before = await upstreamHits(stack);
    for (let i = 0; i < 10; i++) expect((await stack.gql(READ, { id }, key)).errors).toBeUndefined();
    expect(await upstreamHits(stack)).toBeLessThanOrEqual(before + 2);
  });
});

// A 2 s interval, so the gateway's own proofs (at three quarters of it, a look every 500 ms) and the bound
// (the interval) lie 500 ms apart, wider than a loaded machine's timer and HTTP delays.
describe('a revocation the gateway never saw, of a key with live streams only', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { KEY_REVALIDATE_MS: '2000' } });
  });
  afterAll(() => stack?.stop());

  it('ends the live stream within KEY_REVALIDATE_MS, even when revoked just after the gateway proved the key', async () => {
    const key = newKey('quiet');
    const ws = wsClient(stack.wsUrl, key);
    await ws.connected;
    subscribe(ws.client, PAYMENT_EVENT);
    await eventually(() => stack.health(), (h) => h.subscriptions.subscriptions >= 1);
    // The gateway proves the key by listing currencies; revoke the moment one was answered: the worst time.
    const proofs = async () => ((await (await fetch(`${stack.emulator.url}/_emulator/stats`)).json()) as { routes: Record<string, number> }).routes['GET /v1/currencies'] ?? 0;
    const before = await proofs();
    await eventually(proofs, (n) => n > before, 4_000);
    const revokedAt = performance.now();
    await revoke(stack.emulator.url, key);
    const closed = await Promise.race([ws.closed, new Promise((r) => setTimeout(() => r('still open'), 4_000))]);
    expect(closed).toMatchObject({ code: 4401 });
    expect(performance.now() - revokedAt).toBeLessThan(2_000);
  });
});

describeWith('redis-server', 'revocation across instances sharing Redis', () => {
  let redis: RedisServer;
  let a: RealtimeStack;
  let b: RealtimeStack;
  beforeAll(async () => {
    redis = await startRedisServer();
    a = await startRealtimeStack({ env: { REDIS_URL: redis.url, KEY_REVALIDATE_MS: '60000' } });
    b = await startRealtimeStack({ env: { REDIS_URL: redis.url, KEY_REVALIDATE_MS: '60000' }, sharedEmulator: a.emulator, forward: false });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await redis?.stop();
  });

  it('a 401 seen by one instance ends the key on the other within seconds', async () => {
    const key = newKey('two-instances');
    const ws = wsClient(b.wsUrl, key);
    await ws.connected;
    subscribe(ws.client, PAYMENT_EVENT);
    await eventually(() => b.health(), (h) => h.subscriptions.subscriptions >= 1);
    expect((await b.gql(LIST, undefined, key)).errors).toBeUndefined();

    await revoke(a.emulator.url, key);
    expect((await a.gql(LIST, undefined, key)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const closed = await Promise.race([ws.closed, new Promise((r) => setTimeout(() => r('still open'), 3000))]);
    expect(closed).toMatchObject({ code: 4401 });
    const hits = await upstreamHits(a);
    expect((await b.gql(LIST, undefined, key)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await upstreamHits(a)).toBe(hits); // refused by b without asking the upstream
  });
});
