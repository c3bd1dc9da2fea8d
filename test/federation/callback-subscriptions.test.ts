/**
 * Subscriptions over the router's HTTP callback protocol, against the gateway
 * and the emulator running as servers, with a stand-in router written from
 * the protocol's text (callback-router.ts) receiving the callbacks: the check
 * handshake before the answer, events in order and only the key's own,
 * heartbeats (on time beside a slow `next`), the router's 404 ending it,
 * revocation, a refusal after the check and shutdown (one mid-check
 * included) ending it with `complete`, the URL allowlist, the router-only
 * rule, the caps per key and per instance, and a slow router whose
 * subscription ends once its bounded queue overflows (SUBSCRIBER_TOO_SLOW)
 * without slowing other subscribers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { eventually, setUpstreamStatus, startRealtimeStack, wsClient, subscribe, type RealtimeStack } from '../realtime/support.js';
import { CALLBACK_PATH, startCallbackRouter, type CallbackMessage, type CallbackRouter } from './callback-router.js';

const TRANSACTION_UPDATED = 'subscription ($id: ID) { transactionUpdated(id: $id) { id status } }';
const PAYMENT_EVENT = 'subscription { paymentEvent { id type objectId } }';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nexts = (messages: CallbackMessage[]) => messages.filter((m) => m.action === 'next');

async function revoke(emulatorUrl: string, apiKey: string): Promise<void> {
  const res = await fetch(`${emulatorUrl}/_emulator/keys/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey }) });
  expect(res.status).toBe(200);
}

describe('subscriptions over the HTTP callback protocol', () => {
  let router: CallbackRouter;
  let stack: RealtimeStack;
  let graphql: string;
  beforeAll(async () => {
    router = await startCallbackRouter();
    stack = await startRealtimeStack({
      env: { SUBSCRIPTION_CALLBACK_URLS: `${router.url}${CALLBACK_PATH}`, WS_MAX_SUBSCRIPTIONS_PER_KEY: '3', RECONCILE_INITIAL_MS: '100', RECONCILE_MAX_MS: '400' },
    });
    graphql = `http://127.0.0.1:${stack.gateway.port}/graphql`;
  });
  afterAll(async () => {
    await stack?.stop();
    await router?.close();
  });
  const callbackCount = async () => ((await stack.health()).subscriptions as unknown as { callbackSubscriptions: number }).callbackSubscriptions;

  it('checks the callback URL before answering {"data":null}, then sends each state in order and completes at a final one', async () => {
    const key = newKey('cb-order');
    const f = factories(stack.emulator, key);
    const transaction = await f.transaction({ customer: { id: (await f.customer()).id } });
    const registration = router.register();
    const answer = await router.subscribe(graphql, key, TRANSACTION_UPDATED, registration, { variables: { id: String(transaction.id) } });
    const answeredAt = Date.now();
    expect(answer).toEqual({ status: 200, body: { data: null } });
    // The check came first, before the answer, with the protocol header, the id and the verifier.
    const [check] = router.messages(registration.subscriptionId);
    expect(check).toMatchObject({ action: 'check', id: registration.subscriptionId, verifier: registration.verifier, protocol: 'callback/1.0', answered: 204 });
    expect(check!.at).toBeLessThanOrEqual(answeredAt);

    await router.waitFor(registration.subscriptionId, (m) => nexts(m).length === 1);
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'approved');
    await router.waitFor(registration.subscriptionId, (m) => nexts(m).length === 2);
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'canceled');
    const messages = await router.waitFor(registration.subscriptionId, (m) => m.some((x) => x.action === 'complete'));
    expect(nexts(messages).map((m) => (m.payload?.data?.transactionUpdated as { status: string }).status)).toEqual(['PENDING', 'APPROVED', 'CANCELED']);
    expect(messages.every((m) => m.protocol === 'callback/1.0' && m.verifier === registration.verifier)).toBe(true);
    expect(messages.at(-1)).toMatchObject({ action: 'complete' });
    expect(messages.at(-1)!.errors ?? []).toEqual([]);
    await eventually(callbackCount, (n) => n === 0);
  });

  it("answers FORBIDDEN for another account's transaction, masked as on every transport, and starts nothing", async () => {
    const foreign = await factories(stack.emulator, newKey('cb-owner')).transaction();
    const registration = router.register();
    const before = await callbackCount();
    const answer = await router.subscribe(graphql, newKey('cb-reader'), TRANSACTION_UPDATED, registration, { variables: { id: String(foreign.id) } });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(answer.body.errors?.[0]?.extensions).not.toHaveProperty('http');
    expect(answer.body.errors?.[0]?.extensions).toHaveProperty('requestId');
    // The router registered the id at the check: it is told the subscription is over, with the same errors.
    await sleep(200);
    const messages = router.messages(registration.subscriptionId);
    expect(messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(messages[1]!.errors?.[0]).toMatchObject({ message: answer.body.errors?.[0]?.message, extensions: { code: 'FORBIDDEN' } });
    expect(await callbackCount()).toBe(before);
  });

  it('refuses a heartbeatIntervalMs below 500 or above an hour with CALLBACK_EXTENSION_INVALID, calling nothing', async () => {
    for (const heartbeatIntervalMs of [100, 3_600_001, 2 ** 31]) {
      const registration = router.register();
      const answer = await router.subscribe(graphql, newKey('cb-beat'), PAYMENT_EVENT, registration, { heartbeatIntervalMs });
      expect(answer.status, String(heartbeatIntervalMs)).toBe(400);
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', reason: 'CALLBACK_EXTENSION_INVALID' });
      expect(router.messages(registration.subscriptionId)).toEqual([]);
    }
  });

  it('refuses a query sent with extensions.subscription with NOT_A_SUBSCRIPTION, calling nothing', async () => {
    const registration = router.register();
    const answer = await router.subscribe(graphql, newKey('cb-query'), '{ transactions(first: 1) { edges { node { id } } } }', registration);
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', reason: 'NOT_A_SUBSCRIPTION' });
    expect(router.messages(registration.subscriptionId)).toEqual([]);
  });

  it('ends the subscription with complete CALLBACK_FAILED when the router answers a next with 500, and frees its slot', async () => {
    const key = newKey('cb-next-500');
    const registration = router.register({ nextFails: true });
    const before = await callbackCount();
    expect((await router.subscribe(graphql, key, PAYMENT_EVENT, registration)).status).toBe(200);
    await factories(stack.emulator, key).customer();
    const messages = await router.waitFor(registration.subscriptionId, (m) => m.some((x) => x.action === 'complete'));
    expect(messages.map((m) => [m.action, m.answered])).toEqual([['check', 204], ['next', 500], ['complete', 202]]);
    expect(messages.at(-1)!.errors?.[0]).toMatchObject({ extensions: { code: 'CALLBACK_FAILED' } });
    expect(messages.at(-1)!.errors?.[0]?.message).toMatch(/next message .* failed \(answered 500\)/);
    await eventually(callbackCount, (n) => n === before);
  });

  it('starts nothing when the check is answered wrongly, and tells the caller no more than that', async () => {
    const key = newKey('cb-check');
    const refused: string[] = [];
    for (const check of ['refuse', 'no-header'] as const) {
      const registration = router.register({ check });
      const answer = await router.subscribe(graphql, key, PAYMENT_EVENT, registration);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', reason: 'CALLBACK_CHECK_FAILED' } });
      // The caller is not told what answered at the URL; the operator's log is.
      expect(answer.body.errors?.[0]?.message).toBe('The callback check failed: no subscription was started.');
      refused.push(registration.subscriptionId);
    }
    expect(await callbackCount()).toBe(0);
    // An event of the key's reaches neither callback: each got its one check, nothing more.
    await factories(stack.emulator, key).transaction();
    await sleep(300);
    for (const id of refused) expect(router.messages(id).map((m) => m.action)).toEqual(['check']);
  });

  it("sends the caller's events only: another key's transaction never reaches its callback", async () => {
    const [mine, theirs] = [newKey('cb-mine'), newKey('cb-theirs')];
    const registration = router.register();
    expect((await router.subscribe(graphql, mine, PAYMENT_EVENT, registration)).status).toBe(200);
    const other = await factories(stack.emulator, theirs).transaction({ amount: 700 });
    const own = await factories(stack.emulator, mine).transaction({ amount: 500 });
    const messages = await router.waitFor(registration.subscriptionId, (m) => nexts(m).length >= 1);
    await sleep(300); // room for a leak to show up
    const objectIds = nexts(router.messages(registration.subscriptionId)).map((m) => (m.payload?.data?.paymentEvent as { objectId: string }).objectId);
    expect(objectIds).toContain(String(own.id));
    expect(objectIds).not.toContain(String(other.id));
    expect(messages[0]!.action).toBe('check');
    router.drop(registration.subscriptionId);
  });

  it('sends a check every heartbeatIntervalMs, and stops everything once the router answers 404', async () => {
    const key = newKey('cb-heartbeat');
    const registration = router.register();
    expect((await router.subscribe(graphql, key, PAYMENT_EVENT, registration, { heartbeatIntervalMs: 500 })).status).toBe(200);
    // The handshake's check, then at least two heartbeats.
    await router.waitFor(registration.subscriptionId, (m) => m.filter((x) => x.action === 'check' && x.answered === 204).length >= 3, 3000);
    const live = await callbackCount();
    expect(live).toBeGreaterThanOrEqual(1);

    router.drop(registration.subscriptionId);
    await router.waitFor(registration.subscriptionId, (m) => m.some((x) => x.answered === 404), 3000);
    const after404 = router.messages(registration.subscriptionId).length;
    // Neither heartbeats nor events follow: the router dropped it.
    await factories(stack.emulator, key).transaction();
    await sleep(1300);
    expect(router.messages(registration.subscriptionId).length).toBe(after404);
    expect(await callbackCount()).toBe(live - 1);
  });

  it('keeps sending heartbeats on time while a slow router holds a next', async () => {
    const key = newKey('cb-beat-slow');
    const registration = router.register({ nextDelayMs: 2500 });
    expect((await router.subscribe(graphql, key, PAYMENT_EVENT, registration, { heartbeatIntervalMs: 500 })).status).toBe(200);
    await factories(stack.emulator, key).customer();
    const messages = await router.waitFor(registration.subscriptionId, (m) => nexts(m).length === 1, 6000);
    const answeredAt = nexts(messages)[0]!.at;
    // Heartbeats answered while the next was held (sent at about answeredAt - 2500): one per 500 ms, not none.
    const during = messages.filter((m) => m.action === 'check' && m.answered === 204 && m.at > answeredAt - 2300 && m.at < answeredAt - 100);
    expect(during.length).toBeGreaterThanOrEqual(3);
    // Ended before the next test counts what reaches the router: the next heartbeat meets the 404.
    router.drop(registration.subscriptionId);
    await router.waitFor(registration.subscriptionId, (m) => m.some((x) => x.answered === 404), 3000);
  });

  it('refuses a callbackUrl outside SUBSCRIPTION_CALLBACK_URLS without any outbound request', async () => {
    const elsewhere = await startCallbackRouter();
    try {
      const key = newKey('cb-ssrf');
      const { port } = new URL(router.url);
      const tries = [
        elsewhere.register(),
        // The allowed host and path as a prefix of something else, another host behind what looks like the allowed
        // one (as userinfo: the host differs, so the prefix alone refuses it), another port, a relative path.
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}s/x` },
        { ...elsewhere.register(), callbackUrl: `http://127.0.0.1:${port}@${new URL(elsewhere.url).host}${CALLBACK_PATH}/x` },
        { ...elsewhere.register(), callbackUrl: `http://127.0.0.1:${Number(port) + 1}${CALLBACK_PATH}/x` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/../admin` },
        // Normalised, longer than the allowed prefix: only a check of the normalised URL refuses it.
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/../admin/x-longer-than-the-prefix` },
        // Encoded slashes and dots stay in the path as the URL parser leaves them: anything with "%" is refused.
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/..%2fadmin` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/..%2Fadmin` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/%2e%2e%2fadmin` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/x%252f..%252fadmin` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/x%5c..%5cadmin` },
        // The router's URL is <public_url>/<id>: no query, no fragment, not the prefix alone.
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/x?next=/admin` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/x#admin` },
        { ...elsewhere.register(), callbackUrl: `${router.url}${CALLBACK_PATH}/` },
        { ...elsewhere.register(), callbackUrl: 'file:///etc/passwd' },
      ];
      const before = router.received.length;
      for (const registration of tries) {
        const answer = await router.subscribe(graphql, key, PAYMENT_EVENT, registration);
        expect(answer.status, registration.callbackUrl).toBe(400);
        expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', reason: 'CALLBACK_URL_NOT_ALLOWED' });
      }
      expect(elsewhere.received).toEqual([]);
      expect(router.received.length).toBe(before);
    } finally {
      await elsewhere.close();
    }
  });

  it("keeps HTTP's refusal of a subscription sent as a plain POST, and wants the caller's key", async () => {
    const plain = await fetch(graphql, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${newKey('cb-plain')}` }, body: JSON.stringify({ query: PAYMENT_EVENT }) });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { errors: { message: string }[] }).errors[0]!.message).toMatch(/graphql-ws/);
    const registration = router.register();
    const anonymous = await router.subscribe(graphql, null, PAYMENT_EVENT, registration);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(router.messages(registration.subscriptionId)).toEqual([]);
  });

  it('counts callback subscriptions in the live-stream cap per key (WS_MAX_SUBSCRIPTIONS_PER_KEY)', async () => {
    const key = newKey('cb-cap');
    const held = [router.register(), router.register(), router.register()];
    for (const registration of held) expect((await router.subscribe(graphql, key, PAYMENT_EVENT, registration)).status).toBe(200);
    const fourth = router.register();
    const refused = await router.subscribe(graphql, key, PAYMENT_EVENT, fourth);
    expect(refused.status).toBe(429);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(router.messages(fourth.subscriptionId)).toEqual([]);
    // Another key is not affected.
    const other = router.register();
    expect((await router.subscribe(graphql, newKey('cb-cap-other'), PAYMENT_EVENT, other)).status).toBe(200);
    for (const registration of [...held, other]) router.drop(registration.subscriptionId);
  });

  it('ends the subscription with complete and UNAUTHENTICATED when the key is revoked', async () => {
    const key = newKey('cb-revoked');
    const registration = router.register();
    expect((await router.subscribe(graphql, key, PAYMENT_EVENT, registration)).status).toBe(200);
    await revoke(stack.emulator.url, key);
    // Any call that reaches the upstream with the key tells the gateway.
    const refused = await stack.gql('{ transactions(first: 1) { edges { node { id } } } }', undefined, key);
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const messages = await router.waitFor(registration.subscriptionId, (m) => m.some((x) => x.action === 'complete'), 3000);
    expect(messages.at(-1)!.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
  });
});

describe('a slow router', () => {
  let router: CallbackRouter;
  let stack: RealtimeStack;
  beforeAll(async () => {
    router = await startCallbackRouter();
    stack = await startRealtimeStack({ env: { SUBSCRIPTION_CALLBACK_URLS: router.url, SUBSCRIPTION_QUEUE_LIMIT: '3', SUBSCRIPTION_CALLBACK_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await stack?.stop();
    await router?.close();
  });

  it('completes its subscription with SUBSCRIBER_TOO_SLOW when its queue overflows, while another subscriber keeps its pace', async () => {
    const key = newKey('cb-slow');
    const slow = router.register({ nextDelayMs: 800 });
    expect((await router.subscribe(`http://127.0.0.1:${stack.gateway.port}/graphql`, key, PAYMENT_EVENT, slow)).status).toBe(200);
    const ws = wsClient(stack.wsUrl, key);
    await ws.connected;
    const fast = subscribe<{ paymentEvent: { id: string } }>(ws.client, PAYMENT_EVENT);
    await eventually(() => stack.health(), (h) => h.subscriptions.subscriptions >= 2);
    const f = factories(stack.emulator, key);
    const started = Date.now();
    for (let i = 0; i < 6; i += 1) await f.customer();
    // The WebSocket subscriber gets all six while the router still holds the first next.
    await fast.nth(6, 3000);
    expect(Date.now() - started).toBeLessThan(800);
    const messages = await router.waitFor(slow.subscriptionId, (m) => m.some((x) => x.action === 'complete'), 6000);
    expect(messages.at(-1)!.errors?.[0]).toMatchObject({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } });
    expect(nexts(messages).length).toBeLessThan(6);
    fast.dispose();
    await ws.client.dispose();
  });

  it('gives up a check the router never answers after SUBSCRIPTION_CALLBACK_TIMEOUT_MS, and follows no redirect', async () => {
    const graphql = `http://127.0.0.1:${stack.gateway.port}/graphql`;
    const key = newKey('cb-hang');
    const started = Date.now();
    const hung = await router.subscribe(graphql, key, PAYMENT_EVENT, router.register({ check: 'hang' }));
    expect(hung.status).toBe(400);
    expect(hung.body.errors?.[0]?.extensions?.reason).toBe('CALLBACK_CHECK_FAILED');
    expect(Date.now() - started).toBeLessThan(3000);

    const elsewhere = await startCallbackRouter();
    try {
      const target = elsewhere.register();
      const redirected = await router.subscribe(graphql, key, PAYMENT_EVENT, router.register({ check: 'redirect', redirectTo: target.callbackUrl }));
      expect(redirected.status).toBe(400);
      expect(redirected.body.errors?.[0]?.extensions?.reason).toBe('CALLBACK_CHECK_FAILED');
      expect(elsewhere.received).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('with ROUTER_SHARED_SECRET and SUBSCRIPTION_CALLBACK_MAX set', () => {
  const secret = 'router-secret-0123456789';
  const logs: string[] = [];
  let router: CallbackRouter;
  let stack: RealtimeStack;
  let graphql: string;
  beforeAll(async () => {
    router = await startCallbackRouter();
    stack = await startRealtimeStack({ env: { SUBSCRIPTION_CALLBACK_URLS: router.url, ROUTER_SHARED_SECRET: secret, SUBSCRIPTION_CALLBACK_MAX: '3' }, logs });
    graphql = `http://127.0.0.1:${stack.gateway.port}/graphql`;
  });
  afterAll(async () => {
    await stack?.stop();
    await router?.close();
  });

  it('opens callbacks only for the router: a key holder without the secret gets 403 and nothing is called', async () => {
    const key = newKey('cb-not-router');
    for (const headers of [{}, { 'x-router-secret': 'not-the-router-secret' }] as Record<string, string>[]) {
      const registration = router.register();
      const answer = await router.subscribe(graphql, key, PAYMENT_EVENT, registration, { headers });
      expect(answer.status).toBe(403);
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'NOT_FROM_ROUTER' });
      expect(router.messages(registration.subscriptionId)).toEqual([]);
    }
    const registration = router.register();
    expect((await router.subscribe(graphql, key, PAYMENT_EVENT, registration, { headers: { 'x-router-secret': secret } })).status).toBe(200);
    router.drop(registration.subscriptionId);
  });

  it("tells the caller only that the check failed, and logs what answered with the URL's origin alone", async () => {
    const registration = router.register({ check: 'refuse' });
    const answer = await router.subscribe(graphql, newKey('cb-probe'), PAYMENT_EVENT, registration, { headers: { 'x-router-secret': secret } });
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.message).toBe('The callback check failed: no subscription was started.');
    expect(JSON.stringify(answer.body)).not.toMatch(/answered|reach|\b400\b/);
    const line = logs.find((l) => l.includes('the check failed'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ detail: 'answered 400', origin: router.url });
    expect(line).not.toContain(registration.subscriptionId);
    expect(line).not.toContain(registration.verifier);
    expect(line).not.toContain(secret);
  });

  // Last here: it leaves the instance full.
  it('refuses a subscription past SUBSCRIPTION_CALLBACK_MAX, all keys together, with 503 SUBSCRIPTIONS_FULL and calls nothing', async () => {
    const headers = { 'x-router-secret': secret };
    const count = async () => ((await stack.health()).subscriptions as unknown as { callbackSubscriptions: number }).callbackSubscriptions;
    // One key each, so the per-key cap is never what refuses.
    for (let live = await count(); live < 3; live += 1) {
      expect((await router.subscribe(graphql, newKey('cb-max'), PAYMENT_EVENT, router.register(), { headers })).status).toBe(200);
    }
    const registration = router.register();
    const refused = await router.subscribe(graphql, newKey('cb-max-over'), PAYMENT_EVENT, registration, { headers });
    expect(refused.status).toBe(503);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('SUBSCRIPTIONS_FULL');
    expect(router.messages(registration.subscriptionId)).toEqual([]);
  });
});

describe('callbacks off, and shutdown', () => {
  it('answers a callback subscription with CALLBACKS_OFF when SUBSCRIPTION_CALLBACK_URLS is unset, calling nothing', async () => {
    const router = await startCallbackRouter();
    const stack = await startRealtimeStack();
    try {
      const registration = router.register();
      const answer = await router.subscribe(`http://127.0.0.1:${stack.gateway.port}/graphql`, newKey('cb-off'), PAYMENT_EVENT, registration);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', reason: 'CALLBACKS_OFF' });
      expect(router.received).toEqual([]);
    } finally {
      await stack.stop();
      await router.close();
    }
  });

  it('completes every callback subscription when the gateway stops', async () => {
    const router = await startCallbackRouter();
    const stack = await startRealtimeStack({ env: { SUBSCRIPTION_CALLBACK_URLS: router.url } });
    try {
      const registration = router.register();
      expect((await router.subscribe(`http://127.0.0.1:${stack.gateway.port}/graphql`, newKey('cb-stop'), PAYMENT_EVENT, registration)).status).toBe(200);
      await stack.stop();
      const last = router.messages(registration.subscriptionId).at(-1);
      expect(last).toMatchObject({ action: 'complete', answered: 202 });
      expect(last!.errors?.[0]?.message).toMatch(/shutting down/);
    } finally {
      await router.close();
    }
  });

  it('ends with complete SHUTTING_DOWN a subscription whose check was in flight when shutdown began, and answers it 503', async () => {
    const router = await startCallbackRouter();
    const stack = await startRealtimeStack({ env: { SUBSCRIPTION_CALLBACK_URLS: router.url } });
    try {
      const registration = router.register({ checkDelayMs: 1000 });
      const answer = router.subscribe(`http://127.0.0.1:${stack.gateway.port}/graphql`, newKey('cb-stop-mid'), PAYMENT_EVENT, registration);
      // Well inside the check's second: the request is past the door when shutdown begins.
      await sleep(300);
      const stopped = stack.stop();
      expect(await answer).toMatchObject({ status: 503, body: { errors: [{ extensions: { code: 'SHUTTING_DOWN' } }] } });
      await stopped;
      const last = router.messages(registration.subscriptionId).at(-1);
      expect(last).toMatchObject({ action: 'complete', errors: [{ extensions: { code: 'SHUTTING_DOWN' } }] });
    } finally {
      await router.close();
    }
  });
});
