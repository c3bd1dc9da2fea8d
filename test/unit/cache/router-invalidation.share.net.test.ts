/**
 * The router-invalidation queue gives each owner (a caller, or the webhooks together) a share of its pending
 * pushes: against a router that hangs, one caller's flood drops its own pushes, not another's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EntityCache } from '../../../src/cache/index.js';
import { createRouterInvalidation, MAX_PENDING_PER_OWNER, withRouterInvalidation } from '../../../src/cache/router-invalidation.js';
import { createLogger } from '../../../src/logger.js';

/** An entity cache that holds nothing: only the pushes its evictions make are looked at. */
const emptyCache: EntityCache = {
  scope: () => ({ load: async () => [], put: async () => {}, evict: async () => {} }),
  evictObject: async () => {},
  close: async () => {},
};

/** Waits until the router has seen every tag (a wait, not a measure). */
async function seen(router: { tags: string[] }, tags: string[]) {
  const end = Date.now() + 5_000;
  while (!tags.every((t) => router.tags.includes(t)) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

/** A router that never answers until `release`: every push stays pending. */
async function hangingRouter() {
  const held: http.ServerResponse[] = [];
  const tags: string[] = [];
  let answering = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      for (const entry of JSON.parse(Buffer.concat(chunks).toString('utf8')) as { cache_tag: string }[]) tags.push(entry.cache_tag);
      if (answering) res.writeHead(200).end('{}');
      else held.push(res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/invalidation`,
    tags,
    /** Answers what it holds, and everything from now on. */
    release: () => {
      answering = true;
      held.splice(0).forEach((res) => res.writeHead(200).end('{}'));
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe('router invalidation: each owner has a share of the pending pushes', () => {
  let router: Awaited<ReturnType<typeof hangingRouter>> | undefined;
  afterEach(async () => {
    await router?.close();
  });

  it('drops a flooding caller\'s own pushes against a hanging router, and still sends another\'s and a webhook\'s', async () => {
    router = await hangingRouter();
    const outcomes: string[] = [];
    const invalidation = createRouterInvalidation({ url: router.url, key: 'k' }, { logger: createLogger('silent'), observe: (o) => outcomes.push(o) });

    for (let i = 0; i < 1_000; i++) invalidation.push('transaction', [i], 'flooder');
    invalidation.push('transaction', ['other'], 'another');
    invalidation.push('payout', ['hooked']);

    expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(1_000 - MAX_PENDING_PER_OWNER);
    const end = Date.now() + 5_000;
    while (!(router.tags.includes('transaction-other') && router.tags.includes('payout-hooked')) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(router.tags).toContain('transaction-other');
    expect(router.tags).toContain('payout-hooked');

    // Once the router answers, the flooder's share is free again.
    router.release();
    await invalidation.drain();
    outcomes.splice(0);
    invalidation.push('transaction', ['again'], 'flooder');
    await invalidation.drain();
    expect(outcomes).toEqual(['sent']);
  });

  it("charges a caller's mutations to that caller, not to the webhooks: a caller's flood never drops a webhook's invalidation", async () => {
    router = await hangingRouter();
    const outcomes: string[] = [];
    const invalidation = createRouterInvalidation({ url: router.url, key: 'k' }, { logger: createLogger('silent'), observe: (o) => outcomes.push(o) });
    const cache = withRouterInvalidation(emptyCache, invalidation);

    const flooder = cache.scope('flooder');
    for (let i = 0; i < 1_000; i++) await flooder.evict('transaction', [i]);
    await cache.evictObject('payout', 4242);
    expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(1_000 - MAX_PENDING_PER_OWNER);
    await seen(router, ['payout-4242']);
    expect(router.tags).toContain('payout-4242');
    router.release();
    await invalidation.drain();
  });

  /** A fetch that hangs in-process until the test answers: each push stays pending until then. */
  function heldFetch() {
    const held: (() => void)[] = [];
    vi.stubGlobal('fetch', () => new Promise((resolve) => held.push(() => resolve(new Response('{}')))));
    return held;
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it("does not count the webhooks' pending pushes against the callers' part", async () => {
    heldFetch();
    try {
      const outcomes: string[] = [];
      const invalidation = createRouterInvalidation({ url: 'http://router.invalid/invalidation', key: 'k' }, { logger: createLogger('silent'), observe: (o) => outcomes.push(o) });
      // The webhooks' share full first, then ten callers' shares: 900 of the callers' 1000 still fit beside it.
      for (let i = 0; i < MAX_PENDING_PER_OWNER; i++) invalidation.push('payout', [i]);
      for (let c = 0; c < 10; c++) for (let i = 0; i < MAX_PENDING_PER_OWNER; i++) invalidation.push('transaction', [`${c}-${i}`], `caller-${c}`);
      expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(10 * MAX_PENDING_PER_OWNER - 900);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("hands an owner back one place per push that ends, not its whole share", async () => {
    const held = heldFetch();
    try {
      const outcomes: string[] = [];
      const invalidation = createRouterInvalidation({ url: 'http://router.invalid/invalidation', key: 'k' }, { logger: createLogger('silent'), observe: (o) => outcomes.push(o) });
      for (let i = 0; i < MAX_PENDING_PER_OWNER; i++) invalidation.push('transaction', [i], 'flooder');
      held.shift()!();
      await settle();
      expect(outcomes).toEqual(['sent']);
      // One place free: one more push pending, the rest dropped.
      for (let i = 0; i < MAX_PENDING_PER_OWNER; i++) invalidation.push('transaction', [`more-${i}`], 'flooder');
      expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(MAX_PENDING_PER_OWNER - 1);
      held.splice(0).forEach((answer) => answer());
      await invalidation.drain();
      expect(outcomes.filter((o) => o === 'sent')).toHaveLength(MAX_PENDING_PER_OWNER + 1);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  // 1100 pushes held at once: a fetch that hangs in-process stands in for the router, so no thousand sockets are opened.
  it("keeps the webhooks' share free of every caller's flood together: ten callers filling the queue drop none of a webhook's", async () => {
    const tags: string[] = [];
    const held: (() => void)[] = [];
    vi.stubGlobal('fetch', (_url: string, init: { body: string }) => {
      for (const entry of JSON.parse(init.body) as { cache_tag: string }[]) tags.push(entry.cache_tag);
      return new Promise((resolve) => held.push(() => resolve(new Response('{}'))));
    });
    try {
      const outcomes: string[] = [];
      const invalidation = createRouterInvalidation({ url: 'http://router.invalid/invalidation', key: 'k' }, { logger: createLogger('silent'), observe: (o) => outcomes.push(o) });
      const cache = withRouterInvalidation(emptyCache, invalidation);

      for (let c = 0; c < 10; c++) for (let i = 0; i < MAX_PENDING_PER_OWNER; i++) await cache.scope(`caller-${c}`).evict('transaction', [`${c}-${i}`]);
      const dropped = outcomes.filter((o) => o === 'dropped').length;
      // The queue holds 1000 and the webhooks' 100 of them stay theirs: 900 of the callers' 1000 pending.
      expect(dropped).toBe(10 * MAX_PENDING_PER_OWNER - 900);
      for (let i = 0; i < MAX_PENDING_PER_OWNER; i++) await cache.evictObject('payout', i);
      expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(dropped);
      expect(tags.filter((t) => t.startsWith('payout-'))).toHaveLength(MAX_PENDING_PER_OWNER);
      held.splice(0).forEach((answer) => answer());
      await invalidation.drain();
      expect(outcomes.filter((o) => o === 'sent')).toHaveLength(900 + MAX_PENDING_PER_OWNER);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
