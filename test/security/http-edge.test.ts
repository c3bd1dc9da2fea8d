/** The HTTP edge refuses early and cheaply: bodies, credentials, subscriptions over HTTP. */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startStack, type Stack } from '../support/harness.js';

/**
 * Sends raw HTTP and reads until the server closes or answers; returns the status line and whether
 * it closed. With `readAfterMs`, the client reads nothing for that long while it goes on sending,
 * as a busy client does.
 */
function rawRequest(url: string, head: string, bodyChunks: Buffer[], delayMs = 0, readAfterMs = 0): Promise<{ status: number; closed: boolean; sent: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    let sent = 0;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      socket.destroy();
      resolve({ status, closed, sent });
    };
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', async () => {
      if (readAfterMs) {
        socket.pause();
        setTimeout(() => socket.resume(), readAfterMs);
      }
      socket.write(head);
      for (const chunk of bodyChunks) {
        // A client that has its answer stops sending, as curl does; writing on would race the server's close.
        if (socket.destroyed || text.length > 0) break;
        socket.write(chunk);
        sent += chunk.length;
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      }
      setTimeout(() => finish(false), 2_000);
    });
  });
}

describe('HTTP edge', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('a 100 MB body announced by Content-Length gets 413 and a closed connection before it is sent', async () => {
    const { pathname, host } = new URL(stack.gateway.url);
    const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('big')}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`;
    const chunk = Buffer.alloc(64 * 1024, 32);
    const result = await rawRequest(stack.gateway.url, head, Array.from({ length: 1600 }, () => chunk), 1);
    expect(result.status).toBe(413);
    expect(result.closed).toBe(true);
    expect(result.sent).toBeLessThan(20 * 1024 * 1024);
  });

  it('a client that goes on sending and reads late still gets its 413: the connection lingers, it is not reset', async () => {
    const { pathname, host } = new URL(stack.gateway.url);
    const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('late')}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`;
    const chunk = Buffer.alloc(16 * 1024, 32);
    // Sending for about 1.5 s before reading: a cut right after the answer resets the connection
    // under the client's next write, and the answer is lost with it.
    const result = await rawRequest(stack.gateway.url, head, Array.from({ length: 150 }, () => chunk), 10, 1_500);
    expect(result.status).toBe(413);
    expect(result.closed).toBe(true);
  });

  it('a client that never closes its side and goes on sending is cut after the lingering time', async () => {
    const { hostname, port, pathname, host } = new URL(stack.gateway.url);
    const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    const started = Date.now();
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('stays')}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
    // It goes on sending a little, for ever: only the server's cut ends the connection.
    const trickle = setInterval(() => socket.write(Buffer.alloc(1024, 32)), 100);
    socket.on('error', () => {});
    const closedAfter = await new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
    clearInterval(trickle);
    expect(text).toMatch(/^HTTP\/1\.1 413/);
    // Half-open on the client's side, the server's is held for its lingering time (5 s), not for ever.
    expect(closedAfter).toBeGreaterThan(3_000);
    expect(closedAfter).toBeLessThan(15_000);
  }, 20_000);

  it('a request sent behind a refused body on the same connection is never served', async () => {
    const { hostname, port, pathname, host } = new URL(stack.gateway.url);
    const key = newKey('behind');
    const mutation = JSON.stringify({ query: 'mutation { createCustomer(input: { firstname: "Behind", lastname: "Body", email: "behind@example.com" }) { customer { id } } }' });
    const declared = 2 * 1024 * 1024;
    await stack.resetCounts();
    const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
    // The whole refused body, then a mutation on the same connection, as a pipelining client sends them.
    socket.write(Buffer.alloc(declared, 32));
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(mutation)}\r\n\r\n${mutation}`);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    socket.destroy();
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 413']);
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('a refused connection may send only so much before it is cut', async () => {
    const { hostname, port, pathname, host } = new URL(stack.gateway.url);
    const socket = net.connect({ port: Number(port), host: hostname });
    socket.pause(); // reads nothing: only the server's cut ends this
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('flood')}\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 32);
    const started = Date.now();
    let ended = false;
    void closed.then(() => (ended = true));
    // As fast as the connection takes it, for up to 200 MB.
    for (let sent = 0; sent < 200 * 1024 * 1024 && !ended; sent += chunk.length) {
      if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
    }
    // Paused, the client sees the cut only through a write that fails: none fails if the gateway reads it all.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 6_000))]);
    expect(ended).toBe(true);
    // The gateway reads 8 MB past the refusal, then cuts: the rest never leaves the client.
    expect(socket.bytesWritten).toBeLessThan(64 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(4_000);
    socket.destroy();
  });

  it('bytes that make no body chunk count too: endless chunk-size digits are cut within the cap', async () => {
    const { hostname, port, pathname, host } = new URL(stack.gateway.url);
    const socket = net.connect({ port: Number(port), host: hostname });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let ended = false;
    void closed.then(() => (ended = true));
    await new Promise((resolve) => socket.once('connect', resolve));
    const piece = 2 * 1024 * 1024;
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('digits')}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${piece.toString(16)}\r\n`);
    socket.write(Buffer.alloc(piece, 32));
    socket.write('\r\n');
    // Then a chunk size that never ends: the parser reads it without a chunk, a request or an end.
    const zeros = Buffer.alloc(256 * 1024, '0');
    const started = Date.now();
    for (let sent = 0; sent < 400 * 1024 * 1024 && !ended; sent += zeros.length) {
      if (!socket.write(zeros)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
    }
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 6_000))]);
    expect(ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(socket.bytesWritten).toBeLessThan(80 * 1024 * 1024);
    socket.destroy();
  });

  it('requests pipelined behind a refused body cut the connection at once', async () => {
    const { hostname, port, pathname, host } = new URL(stack.gateway.url);
    // Half-open allowed: the client does not close on the server's FIN, only the server's cut ends this.
    const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    // No key: 20,000 bytes are over the anonymous limit. Then ten thousand tiny requests in the same write.
    const tiny = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`.repeat(10_000);
    socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 20000\r\n\r\n${' '.repeat(20_000)}${tiny}`);
    // Then a trickle of the same: a write meets the cut, so the client sees it.
    const trickle = setInterval(() => socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`), 50);
    await closed;
    clearInterval(trickle);
    expect(Date.now() - started).toBeLessThan(1_500);
    // Whatever the client could read before the cut, no request behind the refused one was answered.
    expect(text.match(/HTTP\/1\.1 \d{3}/g) ?? []).not.toContain('HTTP/1.1 200');
  });

  it('a client that waits for 100 Continue gets its 413 instead when the announced body is too large', async () => {
    const { pathname, host } = new URL(stack.gateway.url);
    const expectHead = (length: number) =>
      `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('continue')}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${length}\r\n\r\n`;
    // Nothing of the body is sent: the first line of the answer is what the client waits for.
    expect((await rawRequest(stack.gateway.url, expectHead(100 * 1024 * 1024), [])).status).toBe(413);
    expect((await rawRequest(stack.gateway.url, expectHead(100), [])).status).toBe(100);
  });

  it('a pipelined request runs when its answer\'s turn comes, not when it is parsed', async () => {
    const { hostname, port, pathname, host } = new URL(stack.gateway.url);
    const key = newKey('pipelined');
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', latencyMs: 600, times: 1 });
    await stack.resetCounts();
    const post = (body: string) => `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const slow = JSON.stringify({ query: '{ customer(id: "1") { id } }' });
    const mutation = JSON.stringify({ query: 'mutation { createCustomer(input: { firstname: "Second", lastname: "In Line", email: "second@example.com" }) { customer { id } } }' });
    const socket = net.connect({ port: Number(port), host: hostname });
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(post(slow) + post(mutation));
    try {
      // The first answer waits on a 600 ms upstream read: the mutation has not started yet.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await stack.upstreamCalls('POST /v1/customers')).toBe(0);
      const until = Date.now() + 5_000;
      while ((text.match(/HTTP\/1\.1 200/g) ?? []).length < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
      expect(await stack.upstreamCalls('POST /v1/customers')).toBe(1);
    } finally {
      socket.destroy();
      await stack.admin('DELETE', '/_emulator/faults');
    }
  });

  it('a chunked body is cut at the limit while streaming', async () => {
    const { pathname, host } = new URL(stack.gateway.url);
    const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('chunked')}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const piece = Buffer.alloc(64 * 1024, 32);
    const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    const result = await rawRequest(stack.gateway.url, head, Array.from({ length: 400 }, () => chunk), 1);
    expect(result.status).toBe(413);
    expect(result.sent).toBeLessThan(10 * 1024 * 1024);
  });

  it('a malformed or other-environment key is refused before the body is read or parsed', async () => {
    const { pathname, host } = new URL(stack.gateway.url);
    for (const [authorization, status] of [['Bearer not-a-key', 401], ['Bearer sk_live_abc', 403]] as const) {
      // The body is announced and never sent: only an answer given before reading it can arrive.
      const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n`;
      const result = await rawRequest(stack.gateway.url, head, []);
      expect(result.status).toBe(status);
    }
    // A well-formed key waits for its body: the same request without a body gets no answer in that time.
    const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${newKey('waits')}\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n`;
    expect((await rawRequest(stack.gateway.url, head, [])).status).toBe(0);
  });

  it('without a key only a small body is read (introspection still works)', async () => {
    const big = await fetch(stack.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ __typename ${' '.repeat(20_000)} }` }) });
    expect(big.status).toBe(413);
    const small = await stack.gql<{ __typename: string }>('{ __typename }', {}, null);
    expect(small.data).toEqual({ __typename: 'Query' });
  });

  it('a subscription sent over HTTP is a coded 400', async () => {
    const res = await stack.gql('subscription { paymentEvent { id } }', {}, newKey('sub'));
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });
});
