/**
 * Pending objects and reads in flight in the entity cache (src/cache/index.ts) over the memory store: kept for
 * their max age only while changes are heard (and a max age is set), one upstream read for reads of one key that overlap, none joined
 * across an eviction, a joined failure read again, and the pending ones told to the poll hook.
 */
import { describe, expect, it } from 'vitest';
import { createEntityCache, entityTtlPolicy, memoryStore } from '../../../src/cache/index.js';
import { createLogger } from '../../../src/logger.js';

const settings = { customerTtlMs: 1_000, currencyTtlMs: 1_000, finalTtlMs: 3_000, pendingMaxAgeMs: 2_000 };
const CALLER = 'c'.repeat(32);
const OTHER = 'o'.repeat(32);

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const setup = (hears = true, now = () => Date.now()) => {
  const state = { hears };
  const cache = createEntityCache(memoryStore(100, now), settings, createLogger('silent'), { hearsChanges: () => state.hears, now });
  return { cache, state };
};

describe('pending objects in the entity cache', () => {
  it('keeps a pending transaction for its max age while changes are heard, and serves it only while they are', async () => {
    let at = 1_000_000;
    const { cache, state } = setup(true, () => at);
    let reads = 0;
    const fetch = async (id: string | number) => (reads++, { id, status: 'pending' }) as never;
    await cache.scope(CALLER).load('transaction', [1], fetch);
    await cache.scope(CALLER).load('transaction', [1], fetch);
    expect(reads).toBe(1);
    state.hears = false;
    await cache.scope(CALLER).load('transaction', [1], fetch);
    expect(reads).toBe(2);
    state.hears = true;
    at += 2_001;
    await cache.scope(CALLER).load('transaction', [1], fetch);
    expect(reads).toBe(3);
  });

  it('serves no pending copy older than its max age, whoever wrote it, nor one whose age is unknown', async () => {
    let at = 1_000_000;
    const now = () => at;
    const store = memoryStore(100, now);
    const cache = createEntityCache(store, settings, createLogger('silent'), { hearsChanges: () => true, now });
    // Written with a longer TTL (another instance's setting): kept by the store, refused past our max age.
    await store.write(CALLER, 'transaction', [{ id: 1, value: { id: 1, status: 'pending', written: 'elsewhere' }, ttlMs: 60_000, generation: null }]);
    at += 1_000;
    let reads = 0;
    const fetch = async (id: string | number) => (reads++, { id, status: 'pending' }) as never;
    expect((await cache.scope(CALLER).load('transaction', [1], fetch))[0]).toMatchObject({ written: 'elsewhere' });
    at += 1_001;
    expect((await cache.scope(CALLER).load('transaction', [1], fetch))[0]).toEqual({ id: 1, status: 'pending' });
    expect(reads).toBe(1);
    // A store that does not say when (an older version's Redis entry): a pending copy is not served; a final one is.
    const silent = { ...store, read: async (...args: Parameters<typeof store.read>) => ({ ...(await store.read(...args)), writtenAt: undefined }) };
    const older = createEntityCache(silent, settings, createLogger('silent'), { hearsChanges: () => true, now });
    await older.scope(CALLER).load('transaction', [1], fetch);
    await older.scope(CALLER).load('payout', [2], async (id) => ({ id, status: 'sent' }) as never);
    expect(reads).toBe(2);
    await older.scope(CALLER).load('transaction', [1], fetch);
    expect(reads).toBe(3);
    expect((await older.scope(CALLER).load('payout', [2], async () => { throw new Error('read again'); }))[0]).toEqual({ id: 2, status: 'sent' });
  });

  it('serves a pending copy up to its max age exactly, not a millisecond past it', async () => {
    let at = 1_000_000;
    const now = () => at;
    const store = memoryStore(100, now);
    const cache = createEntityCache(store, settings, createLogger('silent'), { hearsChanges: () => true, now });
    // Kept by the store past our max age (another instance's longer TTL): only our age test decides.
    await store.write(CALLER, 'transaction', [{ id: 1, value: { id: 1, status: 'pending', written: 'then' }, ttlMs: 60_000, generation: null }]);
    const fetch = async (id: string | number) => ({ id, status: 'pending' }) as never;
    at += settings.pendingMaxAgeMs;
    expect((await cache.scope(CALLER).load('transaction', [1], fetch))[0]).toMatchObject({ written: 'then' });
    at += 1;
    expect((await cache.scope(CALLER).load('transaction', [1], fetch))[0]).toEqual({ id: 1, status: 'pending' });
  });

  it('keeps no pending object without a way to hear its changes, or without a max age', async () => {
    let reads = 0;
    const fetch = async (id: string | number) => (reads++, { id, status: 'pending' }) as never;
    const told: number[] = [];
    const polled = (_kind: string, value: { id: number }) => void told.push(value.id);
    // No hearsChanges given: changes are not heard.
    const deaf = createEntityCache(memoryStore(100), settings, createLogger('silent'));
    await deaf.scope(CALLER, { polled }).load('transaction', [1], fetch);
    await deaf.scope(CALLER, { polled }).load('transaction', [1], fetch);
    expect(reads).toBe(2);
    expect(entityTtlPolicy(settings).transaction({ id: 1, status: 'pending' } as never)).toBe(0);
    // Changes heard, but no max age: not kept, so no poll to reconcile either.
    for (const noAge of [{ ...settings, pendingMaxAgeMs: 0 }, { customerTtlMs: 1_000, currencyTtlMs: 1_000, finalTtlMs: 3_000 }]) {
      const ageless = createEntityCache(memoryStore(100), noAge, createLogger('silent'), { hearsChanges: () => true });
      await ageless.scope(CALLER, { polled }).load('transaction', [2], fetch);
      await ageless.scope(CALLER, { polled }).load('transaction', [2], fetch);
    }
    expect(reads).toBe(6);
    expect(told).toEqual([]);
  });

  it('shares no read in flight while the store cannot be read: neither joins one nor lets one be joined', async () => {
    const inner = memoryStore(100);
    let down = true;
    const store = { ...inner, read: (...args: Parameters<typeof inner.read>) => (down ? Promise.reject(new Error('redis down')) : inner.read(...args)) };
    const cache = createEntityCache(store, settings, createLogger('silent'), { hearsChanges: () => true });
    const upstream = deferred<{ id: number; status: string }>();
    let reads = 0;
    const fetch = () => (reads++, upstream.promise) as never;
    // Both reads without the store: no generation to tell an eviction since, so each asks for itself.
    const first = cache.scope(CALLER).load('transaction', [1], fetch);
    await new Promise((r) => setImmediate(r));
    const second = cache.scope(CALLER).load('transaction', [1], fetch);
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
    // The store back: a read does not join one made without it.
    down = false;
    const third = cache.scope(CALLER).load('transaction', [1], fetch);
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(3);
    upstream.resolve({ id: 1, status: 'pending' });
    await Promise.all([first, second, third]);
  });

  it('makes one upstream read for overlapping reads of one key, none shared with another key', async () => {
    const { cache } = setup();
    const upstream = deferred<{ id: number; status: string }>();
    let reads = 0;
    const fetch = () => (reads++, upstream.promise) as never;
    const first = cache.scope(CALLER).load('transaction', [1], fetch);
    await new Promise((r) => setImmediate(r));
    const second = cache.scope(CALLER).load('transaction', [1], fetch);
    const other = cache.scope(OTHER).load('transaction', [1], async () => (reads++, null));
    await new Promise((r) => setImmediate(r));
    upstream.resolve({ id: 1, status: 'pending' });
    expect(await Promise.all([first, second, other])).toEqual([[{ id: 1, status: 'pending' }], [{ id: 1, status: 'pending' }], [null]]);
    expect(reads).toBe(2);
  });

  it('joins no read that started before an eviction, and reads again when the joined one failed', async () => {
    const { cache } = setup();
    const before = deferred<{ id: number; status: string }>();
    let reads = 0;
    const older = cache.scope(CALLER).load('transaction', [1], () => (reads++, before.promise) as never);
    await new Promise((r) => setImmediate(r));
    await cache.evictObject('transaction', 1);
    const newer = cache.scope(CALLER).load('transaction', [1], async (id) => (reads++, { id, status: 'approved' }) as never);
    before.resolve({ id: 1, status: 'pending' });
    expect((await newer)[0]).toEqual({ id: 1, status: 'approved' });
    await older;
    expect(reads).toBe(2);

    const failing = deferred<never>();
    const leader = cache.scope(CALLER).load('payout', [2], () => failing.promise);
    await new Promise((r) => setImmediate(r));
    const joiner = cache.scope(CALLER).load('payout', [2], async (id) => ({ id, status: 'pending' }) as never);
    failing.reject(new Error('the leader\'s deadline passed'));
    expect((await leader)[0]).toBeInstanceOf(Error);
    expect((await joiner)[0]).toEqual({ id: 2, status: 'pending' });
  });

  it('shares no pending read in flight while changes are not heard, nor joins one for a key not proven lately', async () => {
    const { cache, state } = setup(false);
    let reads = 0;
    const slow = () => (reads++, new Promise((r) => setTimeout(() => r({ id: 1, status: 'pending' }), 20))) as never;
    await Promise.all([cache.scope(CALLER).load('transaction', [1], slow), cache.scope(CALLER).load('transaction', [1], slow)]);
    expect(reads).toBe(2);
    state.hears = true;
    await Promise.all([cache.scope(CALLER).load('transaction', [3], slow), cache.scope(CALLER, { refresh: true }).load('transaction', [3], slow)]);
    expect(reads).toBe(4);
  });

  it('tells the poll hook the pending objects it answered, while they may be kept', async () => {
    const { cache, state } = setup();
    const told: string[] = [];
    const polled = (kind: string, value: { id: number; status: string }) => told.push(`${kind}:${value.id}:${value.status}`);
    const statuses: Record<number, string> = { 1: 'pending', 2: 'canceled', 3: 'approved' };
    const fetch = async (id: string | number) => (Number(id) === 4 ? null : { id, status: statuses[Number(id)] }) as never;
    await cache.scope(CALLER, { polled }).load('transaction', [1, 2, 3, 4], fetch);
    await cache.scope(CALLER, { polled }).load('transaction', [1], fetch);
    state.hears = false;
    await cache.scope(CALLER, { polled }).load('transaction', [1], fetch);
    expect(told).toEqual(['transaction:1:pending', 'transaction:3:approved', 'transaction:1:pending']);
  });
});
