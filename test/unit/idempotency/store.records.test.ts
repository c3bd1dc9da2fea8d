/**
 * The idempotency record's life, as both stores keep it (memory, and Redis
 * through a real redis-server): claimed once, replayed once done, bound to its
 * first input, freed by its owner only, and by its lock when the owner is gone.
 */
import { describe, expect, it } from 'vitest';
import { CALLER, LOCK, recordTests, TTL } from './store.records.contract.js';
import { MemoryIdempotencyStore } from '../../../src/idempotency/index.js';

describe('memory idempotency records', () => {
  recordTests(() => new MemoryIdempotencyStore());

  it('completes nothing and releases nothing for a caller it never saw', async () => {
    const store = new MemoryIdempotencyStore();
    expect(await store.complete('k', 'owner', 'fp', '1', TTL, 'nobody')).toBe(false);
    await store.release('k', 'owner', 'fp', TTL, 'nobody');
    expect(await store.peek('k', 'fp', 'nobody')).toEqual({ kind: 'none' });
  });

  it('wakes a waiter as soon as the record completes', async () => {
    const store = new MemoryIdempotencyStore();
    const claim = await store.claim('k', 'fp', LOCK, CALLER);
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const started = Date.now();
    const waiting = store.changed('k', 5_000);
    await store.complete('k', claim.owner, 'fp', '1', TTL, CALLER);
    await waiting;
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
