/**
 * An upstream answer costs the gateway at most UPSTREAM_MAX_RESPONSE_BYTES,
 * with either transport: a gzip bomb is refused unread (no compression is
 * asked for, so none is inflated), a plain body is read up to the cap and no
 * further, and either is UPSTREAM_ERROR to the caller after ONE request: the
 * same call would bring the same answer, so it is not retried.
 */
import type http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HTTP_CLIENTS } from '../../src/upstream/index.js';
import { startGatewayOver, type GatewayOnly } from '../support/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../upstream/fake-upstream.js';
import { aTransaction, enveloped } from '../upstream/fixtures.js';

const CAP = 1024 * 1024;
const QUERY = '{ transaction(id: "101") { id } }';

/** 8 gzip members of 16 MiB of zeros each: about 130 KB on the wire, 128 MiB once inflated. */
const BOMB = (() => {
  const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
  return Buffer.concat(Array.from({ length: 8 }, () => member));
})();

/** Writes `total` bytes of a JSON-looking body in 64 KiB chunks, as fast as the reader takes them; counts what left. */
function streamBody(total: number, sent: { bytes: number }) {
  return (res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const more = () => {
      while (sent.bytes < total && !res.destroyed) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    more();
  };
}

/** The peak growth of the process's resident memory while `run` runs, sampled every few ms. */
async function peakRssGrowth<T>(run: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
  try {
    const result = await run();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - base };
  } finally {
    clearInterval(sampler);
  }
}

describe.each(HTTP_CLIENTS)('upstream answers over the byte cap (%s transport)', (httpClient) => {
  let upstream: FakeUpstream;
  let gateway: GatewayOnly;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    gateway = await startGatewayOver(upstream.url, { UPSTREAM_HTTP_CLIENT: httpClient, UPSTREAM_MAX_RESPONSE_BYTES: String(CAP), RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.splice(0);
  });
  const transactionCalls = () => upstream.requests.filter((r) => r.path === '/v1/transactions/101');

  it('refuses a gzip bomb without inflating it, asks for no compression, and does not retry', async () => {
    upstream.replyWith({
      write: (res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(BOMB.length) });
        res.end(BOMB);
      },
    });

    const { result, growth } = await peakRssGrowth(() => gateway.gql(QUERY));

    expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(transactionCalls()).toHaveLength(1);
    expect(transactionCalls()[0]!.headers['accept-encoding']).toBeUndefined();
    // Inflated, the bomb is 128 MiB (and more as a string); refused, it costs next to nothing.
    expect(growth).toBeLessThan(48 * 1024 * 1024);
  });

  it('reads an error status whatever its body\'s encoding: a compressed 401 still refuses the key', async () => {
    upstream.replyWith({
      write: (res) => {
        const body = gzipSync(Buffer.from(JSON.stringify({ message: 'Invalid API key' })));
        res.writeHead(401, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) });
        res.end(body);
      },
    });

    const result = await gateway.gql(QUERY, {}, `sk_sandbox_compressed_401_${httpClient}`);

    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(transactionCalls()).toHaveLength(1);
  });

  it('stops reading a plain answer at the cap, answers UPSTREAM_ERROR, and does not retry', async () => {
    const sent = { bytes: 0 };
    upstream.replyWith({ write: streamBody(32 * 1024 * 1024, sent) });

    const result = await gateway.gql(QUERY);

    expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(transactionCalls()).toHaveLength(1);
    // The cap, plus what the socket buffers held when the gateway hung up: far from the 32 MiB offered.
    expect(sent.bytes).toBeLessThan(8 * 1024 * 1024);
  });

  it('refuses from the declared length alone, before reading the body', async () => {
    upstream.replyWith({
      write: (res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(CAP + 1) });
        // The body is never sent: a transport that waits for it would wait out its time-out.
        res.flushHeaders();
      },
    });

    const started = Date.now();
    const result = await gateway.gql(QUERY);

    expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(transactionCalls()).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('still serves an honest answer under the cap', async () => {
    upstream.replyWith({ json: enveloped('transaction', aTransaction({ id: 101 })) });

    const result = await gateway.gql<{ transaction: { id: string } }>(QUERY);

    expect(result.errors).toBeUndefined();
    expect(result.data?.transaction.id).toBe('101');
  });
});
