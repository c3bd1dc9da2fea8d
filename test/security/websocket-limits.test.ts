/** WebSocket resources per key, per address and in all, each at its boundary. */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { subscribe, wsClient } from '../realtime/support.js';

const wsUrl = (stack: Stack) => stack.gateway.url.replace(/^http/, 'ws');

describe('WebSocket limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { WS_MAX_CONNECTIONS_PER_KEY: '2', WS_MAX_SUBSCRIPTIONS_PER_KEY: '3', WS_MAX_CONNECTIONS_PER_ADDRESS: '6', WS_CONNECTS_PER_MINUTE: '1000' },
    });
  });
  afterAll(() => stack.stop());

  it('connections per key: 2 are admitted, the 3rd is closed with 1008', async () => {
    const key = newKey('conns');
    const clients = [wsClient(wsUrl(stack), key), wsClient(wsUrl(stack), key)];
    await Promise.all(clients.map((c) => c.connected));
    const third = wsClient(wsUrl(stack), key);
    expect((await third.closed).code).toBe(1008);
    for (const c of clients) await c.client.dispose();
  });

  it('live operations per key: 3 run, the 4th is RATE_LIMITED', async () => {
    const key = newKey('subs');
    const t = await factories(stack.emulator, key).transaction();
    const { client, connected } = wsClient(wsUrl(stack), key);
    await connected;
    const query = 'subscription ($id: ID!) { transactionUpdated(id: $id) { status } }';
    const live = [0, 1, 2].map(() => subscribe(client, query, { id: String(t.id) }));
    await new Promise((r) => setTimeout(r, 300));
    const fourth = subscribe<unknown>(client, query, { id: String(t.id) });
    const error = (await fourth.error) as { extensions?: { code?: string } }[] | { message?: string };
    expect(JSON.stringify(error)).toContain('RATE_LIMITED');
    for (const s of live) s.dispose();
    await client.dispose();
  });

  it('connections per client address: 6 upgrades pass, the 7th is refused with 429 before any handshake', async () => {
    const sockets: WebSocket[] = [];
    const open = () =>
      new Promise<{ ok: boolean; status?: number }>((resolve) => {
        const ws = new WebSocket(wsUrl(stack), 'graphql-transport-ws');
        ws.once('open', () => {
          sockets.push(ws);
          resolve({ ok: true });
        });
        ws.once('unexpected-response', (_req, res) => resolve({ ok: false, status: res.statusCode }));
        ws.once('error', () => resolve({ ok: false }));
      });
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await open());
    expect(results.slice(0, 6).every((r) => r.ok)).toBe(true);
    expect(results[6]).toEqual({ ok: false, status: 429 });
    for (const ws of sockets) ws.terminate();
  });
});
