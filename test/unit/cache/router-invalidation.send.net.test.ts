/**
 * One router invalidation's life (src/cache/router-invalidation.ts) against a stand-in router whose answers
 * the test scripts: what is POSTed, which answers are retried and how often, what is counted and logged, and
 * what the cache wrapper pushes. test/gateway/router-invalidation.test.ts checks the same through the gateway.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EntityCache } from '../../../src/cache/index.js';
import { cacheTagOf, createRouterInvalidation, isTagged, SUBGRAPH_NAME, withRouterInvalidation } from '../../../src/cache/router-invalidation.js';
import { createLogger } from '../../../src/logger.js';

const KEY = 'router-shared-key-0123456789';

interface Received {
  method: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
  at: number;
}

/** Answers each request with the next scripted status (200 once the script is spent). */
async function scriptedRouter(statuses: number[] = []) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
        at: performance.now(),
      });
      res.writeHead(statuses.shift() ?? 200).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/invalidation`,
    received,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

function invalidationTo(url: string, retryBaseMs = 1) {
  const outcomes: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const invalidation = createRouterInvalidation({ url, key: KEY }, { logger: createLogger('info', { destination }), observe: (o) => outcomes.push(o), retryBaseMs });
  return { invalidation, outcomes, lines };
}

describe('router invalidation: one push', () => {
  let router: Awaited<ReturnType<typeof scriptedRouter>> | undefined;
  afterEach(async () => {
    await router?.close();
    router = undefined;
  });

  it("POSTs one cache_tag per id in Apollo Router's shape, with the shared key as the whole Authorization header", async () => {
    router = await scriptedRouter();
    const { invalidation, outcomes, lines } = invalidationTo(router.url);
    invalidation.push('transaction', [1, 'tr_2']);
    await invalidation.drain();
    expect(router.received).toMatchObject([
      {
        method: 'POST',
        authorization: KEY,
        contentType: 'application/json',
        body: [
          { kind: 'cache_tag', subgraphs: [SUBGRAPH_NAME], cache_tag: 'transaction-1' },
          { kind: 'cache_tag', subgraphs: ['payments'], cache_tag: 'transaction-tr_2' },
        ],
      },
    ]);
    expect(outcomes).toEqual(['sent']);
    expect(lines).toEqual([]);
  });

  it('pushes nothing for a kind a router never tags, or for no ids', async () => {
    router = await scriptedRouter();
    const { invalidation, outcomes } = invalidationTo(router.url);
    invalidation.push('currency', ['XOF']);
    invalidation.push('payout', []);
    await invalidation.drain();
    expect(router.received).toEqual([]);
    expect(outcomes).toEqual([]);
    expect(['transaction', 'payout', 'customer', 'currency', 'account'].filter(isTagged)).toEqual(['transaction', 'payout', 'customer']);
    expect(cacheTagOf('payout', 9)).toBe('payout-9');
  });

  it('retries an overloaded or failing router (429, 5xx) until it answers', async () => {
    router = await scriptedRouter([429, 500, 503]);
    const { invalidation, outcomes, lines } = invalidationTo(router.url);
    invalidation.push('customer', [3]);
    await invalidation.drain();
    expect(router.received).toHaveLength(4);
    expect(outcomes).toEqual(['retried', 'retried', 'retried', 'sent']);
    expect(lines).toEqual([]);
  });

  it('gives up after four attempts, counted failed, and logs the status and attempts but never the key', async () => {
    router = await scriptedRouter([502, 502, 502, 502, 502]);
    const { invalidation, outcomes, lines } = invalidationTo(router.url);
    invalidation.push('payout', [5]);
    await invalidation.drain();
    expect(router.received).toHaveLength(4);
    expect(outcomes).toEqual(['retried', 'retried', 'retried', 'failed']);
    expect(lines).toMatchObject([{ level: 40, status: 502, attempts: 4, msg: 'router invalidation failed; the cached copies expire with their TTL' }]);
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('does not retry a refused key or body (4xx other than 429)', async () => {
    for (const status of [400, 401, 403, 404, 499]) {
      router = await scriptedRouter([status]);
      const { invalidation, outcomes, lines } = invalidationTo(router.url);
      invalidation.push('transaction', [7]);
      await invalidation.drain();
      expect(router.received).toHaveLength(1);
      expect(outcomes).toEqual(['failed']);
      expect(lines).toMatchObject([{ status, attempts: 1 }]);
      await router.close();
      router = undefined;
    }
  });

  it('retries a router it cannot reach, and logs no status', async () => {
    router = await scriptedRouter();
    const url = router.url;
    await router.close();
    router = undefined;
    const { invalidation, outcomes, lines } = invalidationTo(url);
    invalidation.push('transaction', [8]);
    await invalidation.drain();
    expect(outcomes).toEqual(['retried', 'retried', 'retried', 'failed']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ attempts: 4 });
    expect(lines[0]).not.toHaveProperty('status');
  });

  // Lower bounds only (timers fire late, never early): each wait is at least half of base x 2^(attempt - 1).
  it('backs off exponentially from the base between attempts', async () => {
    router = await scriptedRouter([503, 503, 503]);
    const { invalidation } = invalidationTo(router.url, 40);
    invalidation.push('transaction', [9]);
    await invalidation.drain();
    const gaps = router.received.slice(1).map((r, i) => r.at - router!.received[i]!.at);
    expect(gaps).toHaveLength(3);
    expect(gaps[0]).toBeGreaterThanOrEqual(19);
    expect(gaps[1]).toBeGreaterThanOrEqual(39);
    expect(gaps[2]).toBeGreaterThanOrEqual(79);
  });

  // Exact, from the timers asked for (no clock read): base x 2^(attempt - 1) x (0.5 + random / 2).
  it('waits the base doubled per attempt, scaled by its jitter', async () => {
    vi.stubGlobal('fetch', async () => new Response('{}', { status: 503 }));
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    // Only the timers router-invalidation.ts asks for: the runtime sets its own too.
    const waits: unknown[] = [];
    const real = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      if (new Error().stack?.includes('router-invalidation.ts')) waits.push(ms);
      return real(fn, ms);
    }) as typeof setTimeout);
    try {
      const { invalidation, outcomes } = invalidationTo('http://router.invalid/invalidation', 8);
      invalidation.push('transaction', [12]);
      await invalidation.drain();
      expect(outcomes).toEqual(['retried', 'retried', 'retried', 'failed']);
      expect(waits).toEqual([6, 12, 24]);
    } finally {
      vi.restoreAllMocks();
      vi.unstubAllGlobals();
    }
  });

  it('drain waits for every push in flight', async () => {
    router = await scriptedRouter([503]);
    const { invalidation, outcomes } = invalidationTo(router.url, 30);
    invalidation.push('transaction', [10]);
    invalidation.push('payout', [11]);
    await invalidation.drain();
    expect(outcomes.filter((o) => o === 'sent')).toHaveLength(2);
  });
});

describe('router invalidation: the cache wrapper', () => {
  it("pushes a caller's eviction after the cache's own, a webhook's object when it names one, and drains before closing", async () => {
    const calls: string[] = [];
    const cache: EntityCache = {
      scope: (callerId) => ({ load: async () => [], put: async () => {}, evict: async (kind, ids) => void calls.push(`evict ${callerId} ${kind} ${ids.join(',')}`) }),
      evictObject: async (kind, id) => void calls.push(`evictObject ${kind} ${id}`),
      close: async () => void calls.push('close'),
    };
    const router = {
      push: (kind: string, ids: readonly (string | number)[], owner?: string) => void calls.push(`push ${kind} ${ids.join(',')} ${owner ?? 'webhooks'}`),
      drain: async () => void calls.push('drain'),
    };
    const wrapped = withRouterInvalidation(cache, router);
    await wrapped.scope('caller-a').evict('transaction', [1, 2]);
    await wrapped.evictObject('payout', 3);
    await wrapped.evictObject(null, 4);
    await wrapped.evictObject('payout', null);
    await wrapped.close();
    expect(calls).toEqual([
      'evict caller-a transaction 1,2',
      'push transaction 1,2 caller-a',
      'evictObject payout 3',
      'push payout 3 webhooks',
      'evictObject null 4',
      'evictObject payout null',
      'drain',
      'close',
    ]);
  });
});
