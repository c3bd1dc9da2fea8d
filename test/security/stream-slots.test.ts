/**
 * Live-operation slots of the streaming transports come back however a
 * stream ends: an SSE request abandoned while its account is still being
 * looked up, and a WebSocket closed with operations live (whose slots must
 * not be given back twice); and one key's slots are one tally across
 * transports (admission.openStream). Also: the subgraph SDL is not served over these
 * transports in production, where it goes to the router only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { eventually, sleep, subscribe, wsClient } from '../realtime/support.js';

const health = async (stack: Stack) =>
  (await (await fetch(new URL('/healthz', stack.gateway.url))).json()) as { subscriptions: { sseStreams: number; subscriptions: number } };

describe('stream slots', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { WS_MAX_SUBSCRIPTIONS_PER_KEY: '2', RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('an SSE request abandoned during the account look-up holds no stream', async () => {
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/accounts', latencyMs: 500 });
    try {
      const key = newKey('sse-abandon');
      for (let i = 0; i < 3; i++) {
        const abort = new AbortController();
        const pending = fetch(stack.gateway.url, {
          method: 'POST',
          signal: abort.signal,
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
          body: JSON.stringify({ query: 'subscription { paymentEvent { id } }' }),
        }).catch(() => null);
        setTimeout(() => abort.abort(), 100);
        await pending;
      }
      // Past the look-up's 500 ms: a leaked stream would be counted by now, and never uncounted.
      await sleep(1_000);
      expect((await health(stack)).subscriptions.sseStreams).toBe(0);
    } finally {
      await stack.admin('DELETE', '/_emulator/faults');
    }
  });

  it('closing a WebSocket gives each live operation its slot back once, not twice', async () => {
    const key = newKey('ws-close');
    const wsUrl = stack.gateway.url.replace(/^http/, 'ws');
    const first = wsClient(wsUrl, key);
    const second = wsClient(wsUrl, key);
    await Promise.all([first.connected, second.connected]);
    const query = 'subscription { paymentEvent { id } }';
    subscribe(first.client, query);
    subscribe(second.client, query);
    await eventually(() => health(stack), (h) => h.subscriptions.subscriptions >= 2, 5_000);
    await first.client.dispose();
    await new Promise((r) => setTimeout(r, 300));
    // One slot is free again (the cap is 2): one more subscription runs, the next is refused.
    const again = subscribe<unknown>(second.client, query);
    const over = subscribe<unknown>(second.client, query);
    expect(JSON.stringify(await over.error)).toContain('RATE_LIMITED');
    again.dispose();
    await second.client.dispose();
  });

  it('one key holds its live streams in one tally, WebSocket and SSE together', async () => {
    const key = newKey('shared-cap');
    const sseStream = (signal: AbortSignal) =>
      fetch(stack.gateway.url, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: 'subscription { paymentEvent { id } }' }),
      });
    const { client, connected } = wsClient(stack.gateway.url.replace(/^http/, 'ws'), key);
    await connected;
    const overWs = subscribe<unknown>(client, 'subscription { paymentEvent { id } }');
    const first = new AbortController();
    const overSse = await sseStream(first.signal);
    expect(overSse.status).toBe(200);
    // Both live (each listens on the bus): the WebSocket operation and the SSE stream.
    await eventually(() => health(stack), (h) => h.subscriptions.sseStreams === 1 && h.subscriptions.subscriptions >= 2, 5_000);
    // The cap is 2: one WebSocket operation and one SSE stream fill it, whichever transport asks next.
    const second = new AbortController();
    const refused = await sseStream(second.signal);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ errors: [{ message: 'At most 2 live event streams per API key.', extensions: { code: 'RATE_LIMITED' } }] });
    const overWsToo = subscribe<unknown>(client, 'subscription { paymentEvent { id } }');
    expect(JSON.stringify(await overWsToo.error)).toContain('At most 2 live operations per API key.');
    // The SSE stream ends: its slot comes back, and the WebSocket may take it.
    first.abort();
    await eventually(() => health(stack), (h) => h.subscriptions.sseStreams === 0, 5_000);
    await sleep(100);
    const again = subscribe<unknown>(client, 'subscription { paymentEvent { id } }');
    expect(await Promise.race([again.error.then((e) => JSON.stringify(e)), sleep(500).then(() => 'still live')])).toBe('still live');
    again.dispose();
    overWs.dispose();
    await client.dispose();
  });
});

describe('the subgraph SDL over streaming transports in production', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { NODE_ENV: 'production', ROUTER_SHARED_SECRET: 'router-secret-0123456789', RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('is refused over WebSocket, as over HTTP without the router secret', async () => {
    const { client, connected } = wsClient(stack.gateway.url.replace(/^http/, 'ws'), newKey('sdl'));
    await connected;
    const sdl = subscribe<unknown>(client, '{ _service { sdl } }');
    const error = JSON.stringify(await sdl.error);
    expect(error).toContain('UNAUTHENTICATED');
    expect(sdl.values).toEqual([]);
    await client.dispose();
  });

  it('an SSE refusal carries no "Did you mean" hint, as over HTTP', async () => {
    const res = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${newKey('hints')}` },
      body: JSON.stringify({ query: 'subscription { transactionUpdatd { id } }' }),
    });
    expect(res.status).toBe(400);
    const body = await res.text();
    expect(body).toContain('GRAPHQL_VALIDATION_FAILED');
    expect(body).not.toMatch(/Did you mean/);
  });
});
