/**
 * The connection-level limits at their boundaries: HTTP connections per
 * instance, WebSocket connections in all, WebSocket upgrades per address per
 * minute, subscribe messages per key per minute, and the body a caller
 * without a key may send.
 */
import http from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

/** Opens `n` raw TCP connections from `localAddress` that send nothing; each tells whether it is still open. */
async function idleSockets(port: number, n: number, localAddress: string): Promise<{ sockets: net.Socket[]; open: () => number }> {
  const sockets = await Promise.all(
    Array.from({ length: n }, () => new Promise<net.Socket>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
      socket.on('error', () => undefined);
      socket.once('close', () => resolve(socket));
    })),
  );
  // The server closes a refused connection as soon as it sees it.
  await new Promise((r) => setTimeout(r, 300));
  return { sockets, open: () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length };
}

/** GET `path` from `localAddress` on a fresh connection: the status, or the error's code. */
function getFrom(port: number, path: string, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ port, host: '127.0.0.1', path, localAddress, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'failed'));
    req.setTimeout(3_000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
  });
}

/** The body of GET `path` from `localAddress`. */
function bodyFrom(port: number, path: string, localAddress: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http.get({ port, host: '127.0.0.1', path, localAddress, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text));
    }).on('error', reject);
  });
}

describe('HTTP connections per client address', () => {
  const current = stackWith({ MAX_HTTP_CONNECTIONS: '100', MAX_HTTP_CONNECTIONS_PER_ADDRESS: '50' });

  it('one address holding idle sockets gets 50 of them; another address and /healthz are still served', async () => {
    const port = current().gateway.port;
    const flood = await idleSockets(port, 120, '127.0.0.1');
    try {
      expect(flood.open()).toBe(50);
      expect(await getFrom(port, '/healthz', '127.0.0.2')).toBe(200);
      const health = JSON.parse(await bodyFrom(port, '/healthz', '127.0.0.2')) as { connections: { refusedPerAddress: number } };
      expect(health.connections.refusedPerAddress).toBeGreaterThanOrEqual(70);
      const query = encodeURIComponent('{ __typename }');
      expect(await getFrom(port, `/graphql?query=${query}`, '127.0.0.2')).not.toBe('ECONNRESET');
      // The flooding address itself still reaches /healthz once one of its sockets is gone.
      flood.sockets[0]!.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect(await getFrom(port, '/healthz', '127.0.0.1')).toBe(200);
    } finally {
      for (const s of flood.sockets) s.destroy();
    }
  });

  it('past 80% of the connections in all, idle ones are closed and new clients are served', async () => {
    const port = current().gateway.port;
    const first = await idleSockets(port, 50, '127.0.0.3');
    const second = await idleSockets(port, 40, '127.0.0.4');
    try {
      expect(first.open() + second.open()).toBe(90);
      // Idle for a second under pressure: closed by the next sweep (the younger ones too, if idle long enough by then).
      // Waited for, not slept on: on a loaded machine the sweep may come late.
      await vi.waitFor(() => expect(first.open()).toBe(0), { timeout: 8_000, interval: 100 });
      expect(first.open() + second.open()).toBeLessThanOrEqual(80);
      expect(await getFrom(port, '/healthz', '127.0.0.5')).toBe(200);
    } finally {
      for (const s of [...first.sockets, ...second.sockets]) s.destroy();
    }
  });

  it('below 80% idle connections are left alone', async () => {
    const port = current().gateway.port;
    const few = await idleSockets(port, 40, '127.0.0.6');
    try {
      await new Promise((r) => setTimeout(r, 2_500));
      expect(few.open()).toBe(40);
    } finally {
      for (const s of few.sockets) s.destroy();
    }
  });
});

describe('HTTP connections through a trusted proxy', () => {
  const current = stackWith({ MAX_HTTP_CONNECTIONS: '100', MAX_HTTP_CONNECTIONS_PER_ADDRESS: '5', TRUSTED_PROXIES: '127.0.0.7' });

  it('the proxy is not capped as one client; any other peer is', async () => {
    const port = current().gateway.port;
    const proxy = await idleSockets(port, 20, '127.0.0.7');
    const client = await idleSockets(port, 20, '127.0.0.8');
    try {
      expect(proxy.open()).toBe(20);
      expect(client.open()).toBe(5);
    } finally {
      for (const s of [...proxy.sockets, ...client.sockets]) s.destroy();
    }
  });

  it('past 80% in all, the proxy\'s idle connections are kept (its keep-alive pool), another peer\'s are closed', async () => {
    const port = current().gateway.port;
    const proxy = await idleSockets(port, 80, '127.0.0.7');
    const client = await idleSockets(port, 5, '127.0.0.8');
    try {
      expect(proxy.open() + client.open()).toBe(85);
      await vi.waitFor(() => expect(client.open()).toBe(0), { timeout: 8_000, interval: 100 });
      expect(proxy.open()).toBe(80);
    } finally {
      for (const s of [...proxy.sockets, ...client.sockets]) s.destroy();
    }
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
