/**
 * What only the Redis store does: a caller's quota, kept by an index scored by expiry, how a waiter polls, its default
 * keys, its close, a result sent again while Redis fails, a claim no replica confirmed.
 */
import type { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { RedisContinuity } from '../../../src/idempotency/redis-continuity.js';
import { RedisIdempotencyStore } from '../../../src/idempotency/redis-store.js';
import { createLogger } from '../../../src/logger.js';
import { ReplicaAckError } from '../../../src/redis.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';

describeWith('redis-server', 'the Redis idempotency store\'s quota and polling', () => {
  const client = redisClientsForSuite();
  let n = 0;
  const prefix = () => `quota-${++n}:`;
  afterEach(() => {
    vi.restoreAllMocks();
  });

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
  it('refuses a continuity checker that watches other markers than its own', () => {
    const redis = client();
    const p = prefix();
    const elsewhere = new RedisContinuity(redis, 'elsewhere:continuity', { quarantineMs: 1_000, logger: createLogger('silent') });
    expect(() => new RedisIdempotencyStore(redis, p, 100, 60_000, elsewhere)).toThrow("the continuity markers are not the store's");
    const its = new RedisContinuity(redis, `${p}continuity`, { quarantineMs: 1_000, logger: createLogger('silent') });
    expect(() => new RedisIdempotencyStore(redis, p, 100, 60_000, its)).not.toThrow();
  });

  it('a peek without a caller reads the record of the caller \'\' (its partition too)', async () => {
    const store = new RedisIdempotencyStore(client(), prefix(), 100, 60_000, undefined, { partitions: 16 });
    const claim = await store.claim('k', 'fp', 60_000, '');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.complete('k', claim.owner, 'fp', '"anon"', 60_000, '');
    expect(await store.peek('k', 'fp')).toEqual({ kind: 'completed', json: '"anon"' });
  });

  /** The store's next `failures` writes fail as a dropped connection would; `onFailure` runs at each. */
  function failingWrites(redis: Redis, failures: number, onFailure = () => {}): { attempts: () => number } {
    const real = redis.pipeline.bind(redis);
    let attempts = 0;
    vi.spyOn(redis, 'pipeline').mockImplementation(((...args: Parameters<Redis['pipeline']>) => {
      const pipeline = real(...args);
      attempts += 1;
      if (failures > 0) {
        failures -= 1;
        pipeline.exec = async () => {
          onFailure();
          throw new Error('Connection is closed.');
        };
      }
      return pipeline;
    }) as Redis['pipeline']);
    return { attempts: () => attempts };
  }

  it('sends a result again while Redis fails, a pause apart, and keeps it once Redis answers', async () => {
    const redis = client();
    const store = new RedisIdempotencyStore(redis, prefix());
    const claim = await store.claim('k', 'fp', 60_000, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const writes = failingWrites(redis, 2);
    const started = performance.now();
    expect(await store.complete('k', claim.owner, 'fp', '"paid"', 60_000, 'A')).toBe(true);
    // Two failures, each followed by a pause of 250 ms (timers fire late on a loaded machine, never early).
    expect(performance.now() - started).toBeGreaterThanOrEqual(480);
    expect(writes.attempts()).toBe(3);
    expect(await store.peek('k', 'fp', 'A')).toEqual({ kind: 'completed', json: '"paid"' });
  });

  it('gives up sending a result once no pause fits in the 15 s since its first try', async () => {
    const redis = client();
    const store = new RedisIdempotencyStore(redis, prefix());
    const claim = await store.claim('k', 'fp', 60_000, 'A');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    let now = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    // A failure at the last moment a pause still fits (15 s minus 250 ms): tried once more, and kept.
    const lastChance = failingWrites(redis, 1, () => {
      now = 1_000_000 + 15_000 - 250;
    });
    expect(await store.complete('k', claim.owner, 'fp', '"paid"', 60_000, 'A')).toBe(true);
    expect(lastChance.attempts()).toBe(2);
    vi.mocked(redis.pipeline).mockRestore();

    // One millisecond later no pause fits: the failure is the answer, with no other try.
    now = 1_000_000;
    const other = await store.claim('k2', 'fp', 60_000, 'A');
    if (other.kind !== 'acquired') throw new Error(other.kind);
    const tooLate = failingWrites(redis, 5, () => {
      now += 15_000 - 250 + 1;
    });
    await expect(store.complete('k2', other.owner, 'fp', '"paid"', 60_000, 'A')).rejects.toThrow('Connection is closed.');
    expect(tooLate.attempts()).toBe(1);
  });

  it('opens again a claim no replica confirmed, and holds the Redis to none of its sequence', async () => {
    const redis = client();
    const p = prefix();
    const continuity = new RedisContinuity(redis, `${p}continuity`, { quarantineMs: 60_000, logger: createLogger('silent') });
    await continuity.start();
    try {
      // A lone server has no replica to confirm on: the claim lands on it, but is refused.
      const store = new RedisIdempotencyStore(redis, p, 100, 60_000, continuity, { acks: { replicaAcks: 1, replicaAckTimeoutMs: 20 } });
      const known = continuity.known();
      await expect(store.claim('k', 'fp', 60_000, 'A')).rejects.toBeInstanceOf(ReplicaAckError);
      // The claim and its opening both moved the marker on the master alone: a replica promoted now holds `known`.
      expect(await redis.hget(`${p}continuity`, 'seq')).toBe(String(known + 2));
      expect(continuity.known()).toBe(known);
      // Opened, not left running until its lock expires: a retry (here without replicas to wait for) takes it at once.
      expect(JSON.parse((await redis.get(`${p}k`))!)).toEqual({ s: 'open', fp: 'fp' });
      const plain = new RedisIdempotencyStore(redis, p, 100, 60_000);
      expect((await plain.claim('k', 'fp', 60_000, 'A')).kind).toBe('acquired');
    } finally {
      continuity.stop();
    }
  });
});
