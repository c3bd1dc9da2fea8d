/**
 * Subscriptions over Server-Sent Events, driven by graphql-sse's own client
 * against the gateway and the emulator running as servers: same /graphql
 * path, same Authorization header, same current-state-first semantics.
 */
import { createClient, NetworkError, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { eventually, setUpstreamStatus, startRealtimeStack, type RealtimeStack } from './support.js';

const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status customer { email } } }`;
type Update = { transactionUpdated: { id: string; status: string; customer: { email: string } | null } };

describe('subscriptions over SSE with the graphql-sse client', () => {
  let stack: RealtimeStack;
  const clients: Client[] = [];
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { RECONCILE_INITIAL_MS: '100', RECONCILE_MAX_MS: '400' } });
  });
  afterAll(async () => {
    for (const c of clients) c.dispose();
    await stack.stop();
  });
  const client = (key: string | null) => {
    const c = createClient({
      url: `http://127.0.0.1:${stack.gateway.port}/graphql`,
      headers: key === null ? {} : { authorization: `Bearer ${key}` },
      retryAttempts: 0,
    });
    clients.push(c);
    return c;
  };

  it('streams the current state, then APPROVED, then CANCELED and completion (a final state)', async () => {
    const key = newKey('sse');
    const f = factories(stack.emulator, key);
    const customer = await f.customer();
    const transaction = await f.transaction({ customer: { id: customer.id } });
    const results = client(key).iterate<Update>({ query: TRANSACTION_UPDATED, variables: { id: String(transaction.id) } });

    const statuses: string[] = [];
    const consumed = (async () => {
      for await (const result of results) {
        expect(result.errors).toBeUndefined();
        statuses.push(result.data!.transactionUpdated.status);
        if (statuses.length === 1) {
          expect(result.data!.transactionUpdated).toEqual({ id: String(transaction.id), status: 'PENDING', customer: { email: customer.email } });
          await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'approved');
        } else if (statuses.length === 2) {
          await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'canceled');
        }
      }
    })();
    // The loop ends only when the server completes the stream.
    await consumed;
    expect(statuses).toEqual(['PENDING', 'APPROVED', 'CANCELED']);
    await eventually(() => stack.health(), (h) => h.subscriptions.sseStreams === 0);
  });

  it('refuses a stream without a key with 401, and a query with 400', async () => {
    const refused = async (c: Client, query: string) => {
      try {
        for await (const _ of c.iterate({ query })) return 'streamed';
      } catch (error) {
        return error instanceof NetworkError ? error.response?.status : String(error);
      }
      return 'completed';
    };
    expect(await refused(client(null), 'subscription { paymentEvent { id } }')).toBe(401);
    expect(await refused(client(newKey('q')), '{ currencies { iso } }')).toBe(400);
    // Every document limit applies before a stream opens: an invalid field, and more aliases than allowed (30).
    expect(await refused(client(newKey('invalid')), 'subscription { paymentEvent { nope } }')).toBe(400);
    const aliases = Array.from({ length: 31 }, (_, i) => `e${i}: paymentEvent { id }`).join(' ');
    expect(await refused(client(newKey('aliases')), `subscription { ${aliases} }`)).toBe(400);
  });

  it('answers a subscription sent as a plain POST with 400, naming both transports that serve it', async () => {
    const res = await fetch(`http://127.0.0.1:${stack.gateway.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${newKey('plain-post')}` },
      body: JSON.stringify({ query: 'subscription { paymentEvent { id } }' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: unknown[] }).errors[0]).toMatchObject({ message: expect.stringMatching(/graphql-ws.*Accept: text\/event-stream/), extensions: { code: 'BAD_REQUEST' } });
  });

  it('reads a stream request\'s body only up to the limit: a large one is a 413, and the gateway serves on', async () => {
    const url = `http://127.0.0.1:${stack.gateway.port}/graphql`;
    const headers = { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${newKey('big-sse')}` };
    // 3 MB of padding in the query: over the 1 MiB a keyed request may send.
    const big = JSON.stringify({ query: `subscription { paymentEvent { id } } ${' '.repeat(3 * 1024 * 1024)}` });
    const refused = await fetch(url, { method: 'POST', headers, body: big });
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    // Without a well-formed key, the anonymous limit (16 KiB).
    const anonymous = await fetch(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer nope' }, body: JSON.stringify({ query: `subscription { paymentEvent { id } } ${' '.repeat(32 * 1024)}` }) });
    expect(anonymous.status).toBe(413);
    const health = await fetch(`http://127.0.0.1:${stack.gateway.port}/healthz`);
    expect(health.status).toBe(200);
  });

  it("answers FORBIDDEN in the stream for another account's transaction", async () => {
    const other = await factories(stack.emulator, newKey('owner')).transaction();
    const results = client(newKey('reader')).iterate({ query: TRANSACTION_UPDATED, variables: { id: String(other.id) } });
    const first = await results.next();
    expect((first.value as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((first.value as { errors?: { extensions?: object }[] }).errors?.[0]?.extensions).not.toHaveProperty('http');
  });
});

describe('event streams per key', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { WS_SUBSCRIBE_PER_MINUTE: '2' } });
  });
  afterAll(() => stack.stop());

  it('refuses a third stream within the minute with 429 and Retry-After, as graphql-ws refuses a third subscribe', async () => {
    const key = newKey('sse_rate');
    const open = () =>
      fetch(`http://127.0.0.1:${stack.gateway.port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: 'subscription { paymentEvent { id } }' }),
      });
    const streams = [await open(), await open()];
    expect(streams.map((r) => r.status)).toEqual([200, 200]);
    // A browser page on another origin may read the stream.
    expect(streams[0]!.headers.get('access-control-allow-origin')).toBe('*');
    expect(streams[0]!.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const third = await open();
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await third.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('RATE_LIMITED');
    for (const s of streams) await s.body?.cancel();
    await eventually(() => stack.health(), (h) => h.subscriptions.sseStreams === 0);
  });
});
