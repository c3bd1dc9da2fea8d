/** What every idempotency store must do with its records, run over memory (store.records.test.ts) and Redis (store.records.redis.test.ts). */
import { expect, it } from 'vitest';
import type { IdempotencyStore } from '../../../src/idempotency/index.js';

export const LOCK = 5_000;
export const TTL = 60_000;
export const CALLER = 'caller-a';

export function recordTests(make: () => IdempotencyStore): void {
  let n = 0;
  const fresh = () => `record-${(n += 1)}`;

  it('is claimed once; a duplicate sees it running, another input a mismatch', async () => {
    const store = make();
    const key = fresh();
    expect(await store.peek(key, 'fp', CALLER)).toEqual({ kind: 'none' });
    const first = await store.claim(key, 'fp', LOCK, CALLER);
    expect(first).toEqual({ kind: 'acquired', owner: expect.any(String) });
    expect(await store.claim(key, 'fp', LOCK, CALLER)).toEqual({ kind: 'in_progress' });
    expect(await store.peek(key, 'fp', CALLER)).toEqual({ kind: 'in_progress' });
    expect(await store.claim(key, 'other', LOCK, CALLER)).toEqual({ kind: 'mismatch' });
    expect(await store.peek(key, 'other', CALLER)).toEqual({ kind: 'mismatch' });
  });

  it('replays the result once its owner completes it, and only its owner may', async () => {
    const store = make();
    const key = fresh();
    const claim = await store.claim(key, 'fp', LOCK, CALLER);
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(await store.complete(key, 'not-the-owner', 'fp', '"stolen"', TTL, CALLER)).toBe(false);
    expect(await store.complete(key, claim.owner, 'fp', '{"id":7}', TTL, CALLER)).toBe(true);
    expect(await store.claim(key, 'fp', LOCK, CALLER)).toEqual({ kind: 'completed', json: '{"id":7}' });
    expect(await store.peek(key, 'fp', CALLER)).toEqual({ kind: 'completed', json: '{"id":7}' });
    expect(await store.claim(key, 'other', LOCK, CALLER)).toEqual({ kind: 'mismatch' });
  });

  it('after a release by its owner, the same input may run again and another input still may not', async () => {
    const store = make();
    const key = fresh();
    const claim = await store.claim(key, 'fp', LOCK, CALLER);
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.release(key, 'not-the-owner', 'fp', TTL, CALLER);
    expect(await store.claim(key, 'fp', LOCK, CALLER)).toEqual({ kind: 'in_progress' });
    await store.release(key, claim.owner, 'fp', TTL, CALLER);
    expect(await store.peek(key, 'fp', CALLER)).toEqual({ kind: 'none' });
    expect(await store.claim(key, 'other', LOCK, CALLER)).toEqual({ kind: 'mismatch' });
    const again = await store.claim(key, 'fp', LOCK, CALLER);
    expect(again).toEqual({ kind: 'acquired', owner: expect.any(String) });
    expect(again.kind === 'acquired' && again.owner).not.toBe(claim.owner);
  });

  it('frees a record whose owner never finished once its lock expires; the late owner can no longer complete it', async () => {
    const store = make();
    const key = fresh();
    const crashed = await store.claim(key, 'fp', 50, CALLER);
    if (crashed.kind !== 'acquired') throw new Error(crashed.kind);
    await new Promise((r) => setTimeout(r, 120));
    const next = await store.claim(key, 'fp', LOCK, CALLER);
    expect(next).toEqual({ kind: 'acquired', owner: expect.any(String) });
    expect(await store.complete(key, crashed.owner, 'fp', '"late"', TTL, CALLER)).toBe(false);
  });

  it('writes nothing when a record is released after its lock expired: the key is free for any input', async () => {
    const store = make();
    const key = fresh();
    const slow = await store.claim(key, 'fp', 50, CALLER);
    if (slow.kind !== 'acquired') throw new Error(slow.kind);
    await new Promise((r) => setTimeout(r, 120));
    await store.release(key, slow.owner, 'fp', TTL, CALLER);
    expect(await store.claim(key, 'other', LOCK, CALLER)).toEqual({ kind: 'acquired', owner: expect.any(String) });
  });

  it('scopes records by key: another record key of the same caller is untouched', async () => {
    const store = make();
    const [a, b] = [fresh(), fresh()];
    await store.claim(a, 'fp', LOCK, CALLER);
    expect(await store.claim(b, 'fp', LOCK, CALLER)).toEqual({ kind: 'acquired', owner: expect.any(String) });
  });

  it('makes a waiter wait when nothing changes, and no longer than asked', async () => {
    const store = make();
    const started = Date.now();
    await store.changed(fresh(), 30);
    // A waiter that returned at once would spin on the store.
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('keeps a result completed after its lock expired when nobody took the key meanwhile: the write happened', async () => {
    const store = make();
    const key = fresh();
    const slow = await store.claim(key, 'fp', 50, CALLER);
    if (slow.kind !== 'acquired') throw new Error(slow.kind);
    await new Promise((r) => setTimeout(r, 120));
    expect(await store.complete(key, slow.owner, 'fp', '"kept"', TTL, CALLER)).toBe(true);
    expect(await store.claim(key, 'fp', LOCK, CALLER)).toEqual({ kind: 'completed', json: '"kept"' });
  });
}
