import { describe, expect, it, vi } from 'vitest';
import { MemoryIdempotencyStore } from '../../../src/idempotency/index.js';

const LOCK = 5_000;
const TTL = 60_000;

async function completed(store: MemoryIdempotencyStore, caller: string, key: string): Promise<void> {
  const claim = await store.claim(key, 'fp', LOCK, caller);
  if (claim.kind !== 'acquired') throw new Error(`expected to acquire ${key}, got ${claim.kind}`);
  await store.complete(key, claim.owner, 'fp', '"result"', TTL, caller);
}

describe('memory idempotency store bounds', () => {
  it('a caller past its quota loses its own oldest record, never another caller\'s', async () => {
    const store = new MemoryIdempotencyStore(1_000, 3);
    await completed(store, 'victim', 'victim-1');
    for (let i = 0; i < 50; i++) await completed(store, 'flooder', `flood-${i}`);
    expect(await store.claim('victim-1', 'fp', LOCK, 'victim')).toEqual({ kind: 'completed', json: '"result"' });
    // The flooder keeps only its three newest.
    expect((await store.claim('flood-49', 'fp', LOCK, 'flooder')).kind).toBe('completed');
    expect((await store.claim('flood-0', 'fp', LOCK, 'flooder')).kind).toBe('acquired');
  });

  it('a full store makes room from the heaviest caller\'s oldest finished record, never refusing a newcomer', async () => {
    const store = new MemoryIdempotencyStore(4, 3);
    await completed(store, 'a', 'a-1');
    await completed(store, 'a', 'a-2');
    await completed(store, 'a', 'a-3');
    await completed(store, 'b', 'b-1');
    expect((await store.claim('c-1', 'fp', LOCK, 'c')).kind).toBe('acquired');
    // a, the heaviest, lost its oldest; b's one record and a's newer ones stand.
    expect((await store.claim('a-1', 'fp', LOCK, 'a')).kind).toBe('acquired');
    for (const [caller, key] of [['a', 'a-3'], ['b', 'b-1']] as const) {
      expect((await store.claim(key, 'fp', LOCK, caller)).kind).toBe('completed');
    }
  });

  it('refuses only when every record is still running: a running claim is never dropped', async () => {
    const store = new MemoryIdempotencyStore(2, 2);
    expect((await store.claim('a-1', 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect((await store.claim('b-1', 'fp', LOCK, 'b')).kind).toBe('acquired');
    expect((await store.claim('c-1', 'fp', LOCK, 'c')).kind).toBe('full');
    expect((await store.claim('a-1', 'fp', LOCK, 'a')).kind).toBe('in_progress');
  });
});

describe('memory idempotency store bytes', () => {
  const big = (n: number) => JSON.stringify('x'.repeat(n));

  it('a caller past its byte quota loses its own oldest records, never another caller\'s', async () => {
    // 1 MiB per caller; each result is about 200 KB (400 KB counted: UTF-16).
    const store = new MemoryIdempotencyStore(1_000, 1_000, 1024 * 1024, 64 * 1024 * 1024);
    await completed(store, 'victim', 'victim-1');
    for (let i = 0; i < 20; i++) {
      const claim = await store.claim(`flood-${i}`, 'fp', LOCK, 'flooder');
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await store.complete(`flood-${i}`, claim.owner, 'fp', big(200_000), TTL, 'flooder');
    }
    expect(store.heldBytes).toBeLessThanOrEqual(1024 * 1024 + 1024);
    expect(await store.claim('victim-1', 'fp', LOCK, 'victim')).toEqual({ kind: 'completed', json: '"result"' });
    expect((await store.claim('flood-19', 'fp', LOCK, 'flooder')).kind).toBe('completed');
    expect((await store.claim('flood-0', 'fp', LOCK, 'flooder')).kind).toBe('acquired');
  });

  it('a store full of bytes drops the heaviest caller\'s oldest result for a newcomer, and counts bytes back when records go', async () => {
    const store = new MemoryIdempotencyStore(1_000, 1_000, 1024 * 1024, 1024 * 1024);
    for (const [caller, key] of [['a', 'a-1'], ['a', 'a-2'], ['b', 'b-1']] as const) {
      const claim = await store.claim(key, 'fp', LOCK, caller);
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await store.complete(key, claim.owner, 'fp', big(200_000), 30, caller);
    }
    expect(store.heldBytes).toBeLessThanOrEqual(1024 * 1024);
    expect((await store.claim('d-1', 'fp', LOCK, 'd')).kind).toBe('acquired');
    expect((await store.claim('b-1', 'fp', LOCK, 'b')).kind).toBe('completed');
    await new Promise((r) => setTimeout(r, 60));
    // The results expired: the bytes they held are free again (d's running claim is left).
    expect((await store.claim('b-1', 'fp', LOCK, 'b')).kind).toBe('acquired');
    expect((await store.claim('a-2', 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect(store.heldBytes).toBeLessThan(1024);
  });

  it('a result over the caller\'s whole quota is not kept, but its key stays taken: no second write', async () => {
    const store = new MemoryIdempotencyStore(1_000, 1_000, 64 * 1024, 1024 * 1024);
    const claim = await store.claim('k', 'fp', LOCK, 'a');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(await store.complete('k', claim.owner, 'fp', big(100_000), TTL, 'a')).toBe(true);
    expect(await store.claim('k', 'fp', LOCK, 'a')).toEqual({ kind: 'completed', json: '!' });
  });
});

describe('memory idempotency store: a caller at its own quota', () => {
  it('is served from its own records even when the store is full of others\' running claims', async () => {
    // 4 records in all, 2 per caller: B and C fill the store with claims still running.
    const store = new MemoryIdempotencyStore(4, 2);
    for (const key of ['a1', 'a2']) expect((await store.claim(key, 'fp', LOCK, 'A')).kind).toBe('acquired');
    for (const key of ['b1', 'b2']) expect((await store.claim(key, 'fp', LOCK, 'B')).kind).toBe('acquired');
    // A is at its quota: its own oldest goes, nothing of B is touched, and the full store is not asked.
    expect((await store.claim('a3', 'fp', LOCK, 'A')).kind).toBe('acquired');
    expect((await store.peek('a1', 'fp', 'A')).kind).toBe('none');
    expect((await store.peek('b1', 'fp', 'B')).kind).toBe('in_progress');
    // A caller within its quota, with nothing finished to drop, is refused: running claims are never dropped.
    expect((await store.claim('c1', 'fp', LOCK, 'C')).kind).toBe('full');
  });
});

describe('memory idempotency store: a newcomer when the store is full', () => {
  it('keeps the newcomer\'s record, so its retry replays instead of acting again', async () => {
    const store = new MemoryIdempotencyStore(4, 2);
    for (const key of ['a1', 'a2']) await completed(store, 'a', key);
    for (const key of ['b1', 'b2']) expect((await store.claim(key, 'fp', LOCK, 'b')).kind).toBe('acquired');
    // A second later, so making room sweeps expired records (at most once a second) and empty callers with them.
    const later = Date.now() + 2_000;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(later);
    const claim = await store.claim('n1', 'fp', LOCK, 'newcomer');
    clock.mockRestore();
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(await store.complete('n1', claim.owner, 'fp', '"paid once"', TTL, 'newcomer')).toBe(true);
    expect(await store.claim('n1', 'fp', LOCK, 'newcomer')).toEqual({ kind: 'completed', json: '"paid once"' });
  });
});
