/**
 * The connection-level limits at their boundaries: HTTP connections per
 * instance, WebSocket connections in all, WebSocket upgrades per address per
 * minute, subscribe messages per key per minute, and the body a caller
 * without a key may send.
 */
import net from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { subscribe, wsClient } from '../realtime/support.js';

const wsUrl = (stack: Stack) => stack.gateway.url.replace(/^http/, 'ws');

/** Opens a raw WebSocket upgrade; resolves with the socket or the HTTP status that refused it. */
function upgrade(url: string): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, 'graphql-transport-ws');
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.once('error', () => resolve({ status: 0 }));
  });
}

/** A stack with these settings for the tests of one describe block. */
function stackWith(env: Record<string, string>): () => Stack {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0', ...env } });
  });
  afterAll(() => stack?.stop());
  return () => stack;
}

describe('HTTP connections per instance', () => {
  const current = stackWith({ MAX_HTTP_CONNECTIONS: '4' });

  it('4 held open are served, the 5th is closed by the server', async () => {
    const stack = current();
    const { port } = new URL(stack.gateway.url);
    const open = await Promise.all(
      Array.from({ length: 4 }, () => new Promise<net.Socket>((resolve) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => resolve(socket));
      })),
    );
    const fifth = await new Promise<'closed' | 'open'>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.once('close', () => resolve('closed'));
      setTimeout(() => {
        resolve('open');
        socket.destroy();
      }, 1_000);
    });
    expect(fifth).toBe('closed');
    for (const socket of open) socket.destroy();
    // Once they are gone, the server takes connections again.
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(new URL('/healthz', stack.gateway.url))).status).toBe(200);
  });

});

describe('WebSocket connections in all', () => {
  const current = stackWith({ WS_MAX_CONNECTIONS: '3' });

  it('3 are admitted, the 4th upgrade gets 503', async () => {
    const stack = current();
    const admitted = [await upgrade(wsUrl(stack)), await upgrade(wsUrl(stack)), await upgrade(wsUrl(stack))];
    expect(admitted.every((a) => a.ws)).toBe(true);
    expect((await upgrade(wsUrl(stack))).status).toBe(503);
    for (const a of admitted) a.ws!.terminate();
  });

});

describe('subscribe messages per key per minute', () => {
  const current = stackWith({ WS_SUBSCRIBE_PER_MINUTE: '3' });

  it('3 pass, the 4th is RATE_LIMITED with retryAfterSeconds', async () => {
    const stack = current();
    const key = newKey('subscribes');
    const t = await factories(stack.emulator, key).transaction();
    const { client, connected } = wsClient(wsUrl(stack), key);
    await connected;
    const query = 'subscription ($id: ID) { transactionUpdated(id: $id) { status } }';
    const three = [0, 1, 2].map(() => subscribe<unknown>(client, query, { id: String(t.id) }));
    await Promise.all(three.map((s) => s.nth(1, 5_000)));
    const fourth = subscribe<unknown>(client, query, { id: String(t.id) });
    expect(JSON.stringify(await fourth.error)).toMatch(/RATE_LIMITED[\s\S]*retryAfterSeconds|retryAfterSeconds[\s\S]*RATE_LIMITED/);
    await client.dispose();
  });

});

describe('the body of a caller without a key', () => {
  const current = stackWith({ MAX_ANONYMOUS_BODY_BYTES: '1024' });

  it('1024 bytes are read, 1025 are refused with 413', async () => {
    const stack = current();
    const body = (n: number) => {
      const query = '{ __typename }';
      return JSON.stringify({ query: query + ' '.repeat(n - JSON.stringify({ query }).length) });
    };
    const post = (text: string) => fetch(stack.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
    expect(Buffer.byteLength(body(1024))).toBe(1024);
    expect((await post(body(1024))).status).toBe(200);
    expect((await post(body(1025))).status).toBe(413);
  });
});

describe('WebSocket upgrades per address per minute', () => {
  const current = stackWith({ WS_CONNECTS_PER_MINUTE: '3' });

  it('3 upgrades pass, the 4th is refused with 429', async () => {
    const stack = current();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await upgrade(wsUrl(stack)));
    expect(results.slice(0, 3).every((r) => r.ws)).toBe(true);
    expect(results[3]!.status).toBe(429);
    for (const r of results) r.ws?.terminate();
  });
});
