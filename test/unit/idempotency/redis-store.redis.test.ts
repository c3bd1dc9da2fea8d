/** What only the Redis store does: how long a caller's index remembers a record, and how a waiter polls. */
import { expect, it } from 'vitest';
import { RedisIdempotencyStore } from '../../../src/idempotency/redis-store.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';

describeWith('redis-server', 'the Redis idempotency store\'s index and polling', () => {
  const client = redisClientsForSuite();

  it('forgets, in a caller\'s index, records older than the retention: they no longer count against its quota', async () => {
    const redis = client();
    const store = new RedisIdempotencyStore(redis, 'retention:', 2, 300);
    const first = await store.claim('k1', 'fp', 60_000, 'A');
    if (first.kind !== 'acquired') throw new Error(first.kind);
    await store.complete('k1', first.owner, 'fp', '"one"', 60_000);
    expect(await redis.pttl('retention:caller:A')).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 400));
    // Past the retention, two new records fit the quota of two: the old one is not dropped to make room.
    for (const key of ['k2', 'k3']) expect((await store.claim(key, 'fp', 60_000, 'A')).kind).toBe('acquired');
    expect(await store.peek('k1', 'fp')).toEqual({ kind: 'completed', json: '"one"' });
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
