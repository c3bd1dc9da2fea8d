import { describe, expect, it } from 'vitest';
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

  it('refuses a new record rather than drop a young one of a caller within its quota', async () => {
    const store = new MemoryIdempotencyStore(4, 2);
    await completed(store, 'a', 'a-1');
    await completed(store, 'a', 'a-2');
    await completed(store, 'b', 'b-1');
    await completed(store, 'b', 'b-2');
    expect((await store.claim('c-1', 'fp', LOCK, 'c')).kind).toBe('full');
    for (const [caller, key] of [['a', 'a-1'], ['a', 'a-2'], ['b', 'b-1'], ['b', 'b-2']] as const) {
      expect((await store.claim(key, 'fp', LOCK, caller)).kind).toBe('completed');
    }
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

  it('refuses new records once the store holds its bytes, and counts bytes back when records go', async () => {
    const store = new MemoryIdempotencyStore(1_000, 1_000, 1024 * 1024, 1024 * 1024);
    for (const caller of ['a', 'b', 'c']) {
      const claim = await store.claim(`${caller}-1`, 'fp', LOCK, caller);
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await store.complete(`${caller}-1`, claim.owner, 'fp', big(200_000), 30, caller);
    }
    expect((await store.claim('d-1', 'fp', LOCK, 'd')).kind).toBe('full');
    await new Promise((r) => setTimeout(r, 60));
    // The three results expired: the bytes they held are free again.
    expect((await store.claim('d-1', 'fp', LOCK, 'd')).kind).toBe('acquired');
    expect(store.heldBytes).toBeLessThan(1024);
  });
});
