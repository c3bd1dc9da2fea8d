/**
 * The rules of the entity cache (src/cache/index.ts) over the real memory store, watched: what may be kept and
 * for how long, what is served (checked again on the way out), what `bypass` and `refresh` change, that a store
 * that fails is a store that misses, and which webhooks evict. The gateway suites check the same over HTTP.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEntityCache, memoryStore, uncached, type EntityStore } from '../../../src/cache/index.js';
import type { StoreEntry } from '../../../src/cache/store.js';
import { createLogger, type Logger } from '../../../src/logger.js';
import { UpstreamInvalidResponseError } from '../../../src/upstream/errors.js';

const settings = { customerTtlMs: 1_000, currencyTtlMs: 2_000, finalTtlMs: 3_000 };
const CALLER = 'c'.repeat(32);

/** The memory store, with every call recorded and any method made to fail on demand. */
function watchedStore() {
  const inner = memoryStore(100);
  const calls: string[] = [];
  const writes: { kind: string; entries: readonly StoreEntry[] }[] = [];
  const failing = new Set<string>();
  const fail = (what: string) => {
    if (failing.has(what)) throw new Error(`${what} failed: redis down`);
  };
  const store: EntityStore = {
    shared: false,
    read: async (callerId, kind, ids) => (calls.push(`read ${kind} ${ids.join(',')}`), fail('read'), inner.read(callerId, kind, ids)),
    write: async (callerId, kind, entries) => {
      calls.push(`write ${kind} ${entries.map((e) => e.id).join(',')}`);
      fail('write');
      writes.push({ kind, entries });
      return inner.write(callerId, kind, entries);
    },
    evict: async (kind, ids) => (calls.push(`evict ${kind} ${ids.join(',')}`), fail('evict'), inner.evict(kind, ids)),
    close: async () => void calls.push('close'),
  };
  return { store, inner, calls, writes, failing };
}

function logged() {
  const lines: { msg: string; what: unknown; err: unknown }[] = [];
  const logger = {
    warn: (obj: { what: unknown; err: unknown }, msg: string) => void lines.push({ msg, what: obj.what, err: obj.err }),
  } as unknown as Logger;
  return { logger, lines };
}

const silent = createLogger('silent');
const fetchFrom = (values: Record<string, unknown>, asked: unknown[] = []) => async (id: string | number) => {
  asked.push(id);
  const value = values[String(id)];
  if (value instanceof Error || typeof value === 'string') throw value;
  return (value ?? null) as never;
};

describe('entity cache: what is kept, and for how long', () => {
  it.each([
    ['customer', { id: 1, email: 'a@b.c' }, 1_000],
    ['currency', { id: 1, iso: 'XOF' }, 2_000],
    ['currencies', [{ id: 1, iso: 'XOF' }], 2_000],
    ['transaction', { id: 1, status: 'declined' }, 3_000],
    ['transaction', { id: 1, status: 'REFUNDED' }, 3_000],
    ['transaction', { id: 1, status: 'Canceled' }, 3_000],
    ['payout', { id: 1, status: 'sent' }, 3_000],
    ['payout', { id: 1, status: 'failed' }, 3_000],
  ] as const)('a %s like %j is kept for %i ms', async (kind, value, ttlMs) => {
    const { store, writes } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await cache.scope(CALLER).load(kind, [1], async () => value as never);
    expect(writes).toEqual([{ kind, entries: [{ id: 1, value, ttlMs, generation: null }] }]);
  });

  it.each([
    ['transaction', { id: 1, status: 'approved' }],
    ['transaction', { id: 1, status: 'pending' }],
    ['payout', { id: 1, status: 'pending' }],
    ['currencies', [{ id: 1, iso: 'XOF' }, new UpstreamInvalidResponseError({ route: 'GET /v1/currencies', detail: 'iso' })]],
    ['webhook', { id: 1 }],
  ] as const)('a %s like %j is not kept', async (kind, value) => {
    const { store, writes } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    expect(await cache.scope(CALLER).load(kind as never, [1], async () => value as never)).toEqual([value]);
    expect(writes).toEqual([]);
  });
});

describe('entity cache: load', () => {
  it('serves what it holds, fetches only the rest (in order), and keeps neither an unknown id nor a failure', async () => {
    const { store, calls } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    const scope = cache.scope(CALLER);
    await scope.load('customer', [2], async (id) => ({ id, email: 'two@x.y' }) as never);
    const asked: unknown[] = [];
    const failure = new Error('upstream down');
    const results = await scope.load('customer', [1, 2, 3, 4], fetchFrom({ 1: { id: 1, email: 'one@x.y' }, 3: failure, 4: 'not an Error' }, asked));
    expect(asked).toEqual([1, 3, 4]);
    expect(results[0]).toEqual({ id: 1, email: 'one@x.y' });
    expect(results[1]).toEqual({ id: 2, email: 'two@x.y' });
    expect(results[2]).toBe(failure);
    expect(results[3]).toEqual(new Error('not an Error'));
    expect(calls.filter((c) => c.startsWith('write'))).toEqual(['write customer 2', 'write customer 1']);

    const none: unknown[] = [];
    const unknown = await scope.load('customer', [9], fetchFrom({}, none));
    expect(unknown).toEqual([null]);
    expect(calls.at(-1)).toBe('read customer 9');
  });

  it('makes no upstream call and no write when everything is cached', async () => {
    const { store, calls } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    const scope = cache.scope(CALLER);
    await scope.load('currency', [1, 2], async (id) => ({ id, iso: `C${id}` }) as never);
    calls.length = 0;
    const asked: unknown[] = [];
    expect(await scope.load('currency', [2, 1], fetchFrom({}, asked))).toEqual([{ id: 2, iso: 'C2' }, { id: 1, iso: 'C1' }]);
    expect(asked).toEqual([]);
    expect(calls).toEqual(['read currency 2,1']);
  });

  it('checks a cached value again on the way out: a snapshot no longer final is fetched, not served', async () => {
    const { store, inner } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await inner.write(CALLER, 'transaction', [{ id: 5, value: { id: 5, status: 'approved' }, ttlMs: 60_000, generation: null }]);
    const asked: unknown[] = [];
    expect(await cache.scope(CALLER).load('transaction', [5], fetchFrom({ 5: { id: 5, status: 'refunded' } }, asked))).toEqual([{ id: 5, status: 'refunded' }]);
    expect(asked).toEqual([5]);
  });

  it('an eviction while the upstream call is in flight wins over the late write', async () => {
    const { store, inner, writes } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await inner.evict('customer', [1]);
    const before = (await inner.read(CALLER, 'customer', [1])).generations[0];
    expect(before).toEqual(expect.any(String));
    await cache.scope(CALLER).load('customer', [1], async () => {
      await inner.evict('customer', [1]);
      return { id: 1, email: 'stale@x.y' } as never;
    });
    expect(writes[0]!.entries[0]!.generation).toBe(before);
    expect((await inner.read(CALLER, 'customer', [1])).values).toEqual([undefined]);
  });

  it('keeps entries per caller', async () => {
    const { store } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await cache.scope(CALLER).load('customer', [1], async () => ({ id: 1, email: 'mine@x.y' }) as never);
    const asked: unknown[] = [];
    await cache.scope('d'.repeat(32)).load('customer', [1], fetchFrom({ 1: { id: 1, email: 'theirs@x.y' } }, asked));
    expect(asked).toEqual([1]);
  });

  it('refresh: serves nothing from the cache but writes what the upstream answered', async () => {
    const { store, inner, writes } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await inner.write(CALLER, 'customer', [{ id: 1, value: { id: 1, email: 'old@x.y' }, ttlMs: 60_000, generation: null }]);
    expect(await cache.scope(CALLER, { refresh: true }).load('customer', [1], async () => ({ id: 1, email: 'new@x.y' }) as never)).toEqual([{ id: 1, email: 'new@x.y' }]);
    expect(writes.map((w) => w.entries.map((e) => e.value))).toEqual([[{ id: 1, email: 'new@x.y' }]]);
    expect(await cache.scope(CALLER).load('customer', [1], fetchFrom({}))).toEqual([{ id: 1, email: 'new@x.y' }]);
  });

  it('bypass: neither reads nor writes, but still evicts for everyone', async () => {
    const { store, inner, calls } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await inner.write(CALLER, 'customer', [{ id: 1, value: { id: 1, email: 'old@x.y' }, ttlMs: 60_000, generation: null }]);
    const scope = cache.scope(CALLER, { bypass: true });
    expect(await scope.load('customer', [1], async () => ({ id: 1, email: 'new@x.y' }) as never)).toEqual([{ id: 1, email: 'new@x.y' }]);
    await scope.put('customer', [{ id: 1, value: { id: 1, email: 'put@x.y' } as never }]);
    expect(calls).toEqual([]);
    await scope.evict('customer', [1]);
    expect(calls).toEqual(['evict customer 1']);
    expect((await inner.read(CALLER, 'customer', [1])).values).toEqual([undefined]);
  });

  it('without a store, every load goes to the upstream and put and evict do nothing', async () => {
    const cache = createEntityCache(null, settings, silent);
    const scope = cache.scope(CALLER);
    expect(scope).toBe(uncached);
    const asked: unknown[] = [];
    await scope.load('customer', [1, 1], fetchFrom({ 1: { id: 1 } }, asked));
    expect(asked).toEqual([1, 1]);
    await expect(scope.put('customer', [])).resolves.toBeUndefined();
    await expect(scope.evict('customer', [1])).resolves.toBeUndefined();
    await expect(cache.evictObject('customer', 1)).resolves.toBeUndefined();
    await expect(cache.close()).resolves.toBeUndefined();
  });
});

describe('entity cache: put', () => {
  it('writes only what may be kept, with its TTL, and nothing at all when nothing may', async () => {
    const { store, calls, writes } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    const scope = cache.scope(CALLER);
    await scope.put('transaction', [{ id: 1, value: { id: 1, status: 'pending' } as never }]);
    expect(calls).toEqual([]);
    await scope.put('transaction', [
      { id: 1, value: { id: 1, status: 'pending' } as never },
      { id: 2, value: { id: 2, status: 'expired' } as never },
    ]);
    expect(writes).toEqual([{ kind: 'transaction', entries: [{ id: 2, value: { id: 2, status: 'expired' }, ttlMs: 3_000, generation: null }] }]);
    expect(calls).toEqual(['read transaction 2', 'write transaction 2']);
    expect(await scope.load('transaction', [2], fetchFrom({}))).toEqual([{ id: 2, status: 'expired' }]);
  });

  it('a put after an earlier eviction is kept: it carries the generation it read', async () => {
    const { store, inner } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await inner.evict('customer', [1]);
    await cache.scope(CALLER).put('customer', [{ id: 1, value: { id: 1, email: 'new@x.y' } as never }]);
    expect((await inner.read(CALLER, 'customer', [1])).values).toEqual([{ id: 1, email: 'new@x.y' }]);
  });

  it('an eviction since the read wins over the put', async () => {
    const { store, inner } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    const realRead = store.read;
    store.read = async (...args) => {
      const read = await realRead(...args);
      await inner.evict('customer', [1]);
      return read;
    };
    await cache.scope(CALLER).put('customer', [{ id: 1, value: { id: 1 } as never }]);
    expect((await inner.read(CALLER, 'customer', [1])).values).toEqual([undefined]);
  });
});

describe('entity cache: a store that fails is a store that misses', () => {
  it('a failed read goes to the upstream and writes nothing; the warning names what failed, once in ten seconds', async () => {
    const { store, calls, failing } = watchedStore();
    const { logger, lines } = logged();
    const cache = createEntityCache(store, settings, logger);
    failing.add('read');
    const asked: unknown[] = [];
    expect(await cache.scope(CALLER).load('customer', [1], fetchFrom({ 1: { id: 1 } }, asked))).toEqual([{ id: 1 }]);
    expect(await cache.scope(CALLER).load('customer', [2], fetchFrom({ 2: { id: 2 } }, asked))).toEqual([{ id: 2 }]);
    await cache.scope(CALLER).put('customer', [{ id: 3, value: { id: 3 } as never }]);
    expect(asked).toEqual([1, 2]);
    expect(calls.filter((c) => c.startsWith('write'))).toEqual([]);
    expect(lines).toEqual([{ msg: 'entity cache unavailable; reading the upstream', what: 'read', err: { message: 'read failed: redis down' } }]);
  });

  it('a failed write or eviction still answers', async () => {
    const { store, failing } = watchedStore();
    const { logger, lines } = logged();
    const cache = createEntityCache(store, settings, logger);
    failing.add('write');
    failing.add('evict');
    expect(await cache.scope(CALLER).load('customer', [1], fetchFrom({ 1: { id: 1 } }))).toEqual([{ id: 1 }]);
    await expect(cache.scope(CALLER).put('customer', [{ id: 2, value: { id: 2 } as never }])).resolves.toBeUndefined();
    await expect(cache.scope(CALLER).evict('customer', [1])).resolves.toBeUndefined();
    expect(lines.map((l) => l.what)).toEqual(['write']);
  });
});

describe('entity cache: the warning of a failing store', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ['read', 'the read before a put', (c: ReturnType<typeof createEntityCache>) => c.scope(CALLER).put('customer', [{ id: 1, value: { id: 1 } as never }])],
    ['write', 'the write of a put', (c: ReturnType<typeof createEntityCache>) => c.scope(CALLER).put('customer', [{ id: 1, value: { id: 1 } as never }])],
    ['evict', 'an operation\'s eviction', (c: ReturnType<typeof createEntityCache>) => c.scope(CALLER).evict('customer', [1])],
  ] as const)('names %s when %s fails', async (what, _where, act) => {
    const { store, failing } = watchedStore();
    const { logger, lines } = logged();
    failing.add(what);
    await act(createEntityCache(store, settings, logger));
    expect(lines.map((l) => l.what)).toEqual([what]);
  });

  it('warns again only once more than ten seconds have passed', async () => {
    const { store, failing } = watchedStore();
    const { logger, lines } = logged();
    const cache = createEntityCache(store, settings, logger);
    failing.add('evict');
    let now = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const fail = () => cache.scope(CALLER).evict('customer', [1]);
    await fail();
    now += 10_000;
    await fail();
    expect(lines).toHaveLength(1);
    now += 1;
    await fail();
    expect(lines).toHaveLength(2);
  });
});

describe('entity cache: what a signed webhook evicts', () => {
  it('a transaction, payout or customer it names, for every caller; nothing for other kinds or without an id', async () => {
    const { store, calls } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    await cache.evictObject('transaction', 1);
    await cache.evictObject('payout', 2);
    await cache.evictObject('customer', 3);
    await cache.evictObject('currency', 4);
    await cache.evictObject('refund', 5);
    await cache.evictObject(null, 6);
    await cache.evictObject('customer', null);
    expect(calls).toEqual(['evict transaction 1', 'evict payout 2', 'evict customer 3']);
  });

  it('does not hide a failed eviction: the webhook is redelivered rather than leave a stale copy', async () => {
    const { store, failing } = watchedStore();
    const cache = createEntityCache(store, settings, silent);
    failing.add('evict');
    await expect(cache.evictObject('customer', 1)).rejects.toThrow('evict failed');
  });

  it('close closes the store', async () => {
    const { store, calls } = watchedStore();
    await createEntityCache(store, settings, silent).close();
    expect(calls).toEqual(['close']);
  });
});
