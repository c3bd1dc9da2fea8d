/** What only the Redis store does: a caller's quota, kept by an index scored by expiry, how a waiter polls, its default keys, its close. */
import { expect, it, vi } from 'vitest';
import { RedisContinuity } from '../../../src/idempotency/redis-continuity.js';
import { RedisIdempotencyStore } from '../../../src/idempotency/redis-store.js';
import { createLogger } from '../../../src/logger.js';
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

  it('polls, not spins: a waiter that may wait sleeps at least most of a poll before it looks again', async () => {
    const store = new RedisIdempotencyStore(client(), 'polling:');
    // A lower bound only: a loaded machine makes a timer later, never earlier.
    for (const ms of [10_000, 20]) {
      const started = performance.now();
      await store.changed('k', ms);
      expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    }
  });

  it('by default keeps its records, each caller\'s index and the marker under gateway:idempotency:, the index for a day', async () => {
    const redis = client();
    const store = new RedisIdempotencyStore(redis);
    const claim = await store.claim('default-k', 'fp', 60_000, 'D');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(JSON.parse((await redis.get('gateway:idempotency:default-k'))!)).toMatchObject({ s: 'running', fp: 'fp' });
    expect(await redis.zscore('gateway:idempotency:caller:D', 'gateway:idempotency:default-k')).not.toBeNull();
    const day = 24 * 60 * 60 * 1000;
    expect(await redis.pttl('gateway:idempotency:caller:D')).toBeGreaterThan(day - 60_000);
    expect(await redis.pttl('gateway:idempotency:caller:D')).toBeLessThanOrEqual(day);
    // Without a continuity checker the scripts still move the marker's sequence, for one started later.
    expect(await redis.hget('gateway:idempotency:continuity', 'seq')).toBe('1');
    expect(await store.complete('default-k', claim.owner, 'fp', '"d"', 60_000, 'D')).toBe(true);
    expect(await redis.hget('gateway:idempotency:continuity', 'seq')).toBe('2');
    expect(store.condition()).toBeUndefined();
  });

  it('closes its connection, and stops its continuity checks first', async () => {
    const redis = client();
    const p = prefix();
    const continuity = new RedisContinuity(redis, `${p}continuity`, { quarantineMs: 1_000, logger: createLogger('silent') });
    await continuity.start();
    const listening = redis.listenerCount('ready');
    const store = new RedisIdempotencyStore(redis, p, 100, 60_000, continuity);
    await store.claim('k', 'fp', 60_000, 'A');
    await store.close();
    expect(redis.listenerCount('ready')).toBe(listening - 1);
    const end = Date.now() + 2_000;
    while (redis.status !== 'end' && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(redis.status).toBe('end');
  });

  it('closes a connection without a continuity checker, and disconnects when Redis does not answer the goodbye', async () => {
    const plain = client();
    await new RedisIdempotencyStore(plain, prefix()).close();
    const unanswered = client();
    await unanswered.ping();
    vi.spyOn(unanswered, 'quit').mockRejectedValue(new Error('no answer'));
    await new RedisIdempotencyStore(unanswered, prefix()).close();
    const end = Date.now() + 2_000;
    while ((plain.status !== 'end' || unanswered.status !== 'end') && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect([plain.status, unanswered.status]).toEqual(['end', 'end']);
  });
});
