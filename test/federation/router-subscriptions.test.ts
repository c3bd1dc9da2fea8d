/**
 * The subgraph side of Apollo Router's subscription passthrough
 * (supergraph/router.yaml: `subscription.mode.passthrough`, protocol
 * `graphql_ws`). The Router binary cannot run here, so this drives the
 * gateway the way the Router's subgraph WebSocket client does: an upgrade to
 * /graphql with `Sec-WebSocket-Protocol: graphql-transport-ws` carrying the
 * headers it propagates (Authorization), a `connection_init` whose payload
 * is `{"token": "<the Authorization header value>"}`, then a `subscribe`
 * with the subgraph operation its planner wrote.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { setUpstreamStatus, startRealtimeStack, type RealtimeStack } from '../realtime/support.js';

interface Message {
  type: string;
  id?: string;
  payload?: { data?: { transactionUpdated?: { id: string; status: string } }; errors?: unknown[] } & Record<string, unknown>;
}

/** One router-to-subgraph connection: upgrade headers, connection_init payload, and the messages received. */
async function routerConnection(url: string, opts: { headers: Record<string, string>; payload: Record<string, unknown> | undefined }) {
  const ws = new WebSocket(url, 'graphql-transport-ws', { headers: opts.headers });
  const messages: Message[] = [];
  const waiters: { ok: (m: Message[]) => boolean; resolve: () => void }[] = [];
  ws.on('message', (raw) => {
    messages.push(JSON.parse(raw.toString()) as Message);
    for (const w of waiters.filter((w) => w.ok(messages))) w.resolve();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', ...(opts.payload ? { payload: opts.payload } : {}) }));
  const until = (ok: (m: Message[]) => boolean, timeoutMs = 5000) =>
    ok(messages)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`not received within ${timeoutMs} ms: ${JSON.stringify(messages)}`)), timeoutMs);
          waiters.push({ ok, resolve: () => (clearTimeout(timer), resolve()) });
        });
  return { ws, messages, closed, until };
}

// What Router's query planner sends to the payments subgraph for a root subscription field.
const SUBGRAPH_OPERATION = 'subscription Checkout__payments__0($id:ID){transactionUpdated(id:$id){id status}}';

describe('Apollo Router subscription passthrough, subgraph side', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ env: { RECONCILE_INITIAL_MS: '100', RECONCILE_MAX_MS: '400' } });
  });
  afterAll(() => stack.stop());

  it('accepts the key as the Router sends it (connection_init token and upgrade header) and streams the subscription', async () => {
    const key = newKey('router');
    const transaction = await factories(stack.emulator, key).transaction();
    const authorization = `Bearer ${key}`;
    const conn = await routerConnection(stack.wsUrl, { headers: { authorization }, payload: { token: authorization } });
    await conn.until((m) => m.some((x) => x.type === 'connection_ack'));
    conn.ws.send(
      JSON.stringify({ id: 'b3d5', type: 'subscribe', payload: { query: SUBGRAPH_OPERATION, operationName: 'Checkout__payments__0', variables: { id: String(transaction.id) }, extensions: {} } }),
    );
    await conn.until((m) => m.some((x) => x.type === 'next'));
    await setUpstreamStatus(stack.emulator.url, 'transactions', transaction.id, 'approved');
    await conn.until((m) => m.filter((x) => x.type === 'next').length === 2);
    const next = conn.messages.filter((x) => x.type === 'next');
    expect(next.map((x) => [x.id, x.payload?.data?.transactionUpdated?.status])).toEqual([
      ['b3d5', 'PENDING'],
      ['b3d5', 'APPROVED'],
    ]);
    // Router heartbeats (graphql_ws `ping`) are answered.
    conn.ws.send(JSON.stringify({ type: 'ping' }));
    await conn.until((m) => m.some((x) => x.type === 'pong'));
    conn.ws.close(1000);
  });

  it.each([
    { case: 'the connection_init token alone', headers: {}, payload: (key: string) => ({ token: `Bearer ${key}` }) },
    { case: 'the propagated upgrade header alone (custom connection params set empty)', headers: (key: string) => ({ authorization: `Bearer ${key}` }), payload: () => ({}) },
  ])('authenticates with $case', async ({ headers, payload }) => {
    const key = newKey('router_alt');
    const transaction = await factories(stack.emulator, key).transaction();
    const conn = await routerConnection(stack.wsUrl, { headers: typeof headers === 'function' ? headers(key) : headers, payload: payload(key) });
    await conn.until((m) => m.some((x) => x.type === 'connection_ack'));
    // Acknowledged and then kept: the connection streams, as this key, an object only this key sees.
    conn.ws.send(
      JSON.stringify({ id: 'alt1', type: 'subscribe', payload: { query: SUBGRAPH_OPERATION, operationName: 'Checkout__payments__0', variables: { id: String(transaction.id) }, extensions: {} } }),
    );
    await conn.until((m) => m.some((x) => x.type === 'next'));
    expect(conn.messages.filter((x) => x.type === 'next').map((x) => x.payload?.data?.transactionUpdated)).toEqual([{ id: String(transaction.id), status: 'PENDING' }]);
    expect(conn.ws.readyState).toBe(WebSocket.OPEN);
    conn.ws.close(1000);
  });

  it('closes with 4401 when the Router forwards no Authorization (the headers rule is missing)', async () => {
    const conn = await routerConnection(stack.wsUrl, { headers: {}, payload: undefined });
    expect((await conn.closed).code).toBe(4401);
  });
});
