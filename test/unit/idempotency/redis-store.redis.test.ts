/** What only the Redis store does: a caller's quota, kept by an index scored by expiry, and how a waiter polls. */
import { expect, it } from 'vitest';
import { RedisIdempotencyStore } from '../../../src/idempotency/redis-store.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';

describeWith('redis-server', 'the Redis idempotency store\'s quota and polling', () => {
  const client = redisClientsForSuite();
  let n = 0;
  const prefix = () => `quota-${++n}:`;

  it('refuses a caller at its quota and drops none of its records; another caller still claims', async () => {
    const store = new RedisIdempotencyStore(client(), prefix(), 2);
    for (const key of ['k1', 'k2']) {
      const claim = await store.claim(key, 'fp', 60_000, 'A');
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      expect(await store.complete(key, claim.owner, 'fp', `"${key}"`, 60_000, 'A')).toBe(true);
    }
    expect(await store.claim('k3', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    expect(await store.claim('k1', 'fp', 60_000, 'A')).toEqual({ kind: 'completed', json: '"k1"' });
    expect(await store.claim('k2', 'fp', 60_000, 'A')).toEqual({ kind: 'completed', json: '"k2"' });
    expect((await store.claim('b1', 'fp', 60_000, 'B')).kind).toBe('acquired');
  });

  it('a key released (open) is taken again in its own place at the quota', async () => {
    const store = new RedisIdempotencyStore(client(), prefix(), 1);
    const claim = await store.claim('k', 'fp', 60_000, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.release('k', claim.owner, 'fp', 60_000, 'A');
    expect((await store.claim('k', 'fp', 60_000, 'A')).kind).toBe('acquired');
  });

  it('a claim whose lock expired no longer counts against the quota', async () => {
    const redis = client();
    const p = prefix();
    const store = new RedisIdempotencyStore(redis, p, 1, 60_000);
    expect((await store.claim('k1', 'fp', 50, 'A')).kind).toBe('acquired');
    expect((await store.claim('k2', 'fp', 60_000, 'A')).kind).toBe('full');
    await new Promise((r) => setTimeout(r, 100));
    expect((await store.claim('k2', 'fp', 60_000, 'A')).kind).toBe('acquired');
    expect(await redis.zcard(`${p}caller:A`)).toBe(1);
    expect(await redis.pttl(`${p}caller:A`)).toBeGreaterThan(59_000);
  });

  it('a completed record counts until its result expires, not its lock', async () => {
    const store = new RedisIdempotencyStore(client(), prefix(), 1);
    const claim = await store.claim('k1', 'fp', 50, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.complete('k1', claim.owner, 'fp', '"one"', 60_000, 'A');
    await new Promise((r) => setTimeout(r, 100));
    expect(await store.claim('k2', 'fp', 60_000, 'A')).toEqual({ kind: 'full' });
    expect(await store.peek('k1', 'fp')).toEqual({ kind: 'completed', json: '"one"' });
  });

  it('a release moves the key\'s place in the index to the release\'s expiry', async () => {
    const store = new RedisIdempotencyStore(client(), prefix(), 1);
    const claim = await store.claim('k1', 'fp', 60_000, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    // A refused API key's record expires at once: its place goes with it.
    await store.release('k1', claim.owner, 'fp', 1, 'A');
    await new Promise((r) => setTimeout(r, 20));
    expect((await store.claim('k2', 'fp', 60_000, 'A')).kind).toBe('acquired');
  });

  it('wakes a waiter within a poll, and at once when it may not wait', async () => {
    const store = new RedisIdempotencyStore(client(), 'polling:');
    let started = Date.now();
    await store.changed('k', 10_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    started = Date.now();
    await store.changed('k', 0);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
