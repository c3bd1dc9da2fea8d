/**
 * A Sentinel connection ioredis ended on its own connects again; one the gateway closed stays closed. The end is made
 * the way ioredis's failover detector makes it: the connector disconnected while the connection is being made again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { RedisLinks, type RedisClient } from '../../src/redis.js';
import { redisTarget } from '../../src/redis-target.js';
import { startRedisSentinel, type SentinelHandle } from '../support/redis-topologies.js';
import { describeWith } from '../support/tools.js';
import { sleep } from '../realtime/support.js';

describeWith('redis-server', 'a connection through Redis Sentinel', () => {
  let sentinel: SentinelHandle;
  const opened: RedisClient[] = [];
  beforeAll(async () => {
    sentinel = await startRedisSentinel();
  }, 60_000);
  afterAll(async () => {
    for (const redis of opened) redis.disconnect();
    await sentinel?.stop();
  });

  const open = async () => {
    const target = redisTarget({ REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master })!;
    const redis = new RedisLinks(createLogger('silent')).open(target, 'idempotency');
    opened.push(redis);
    expect(await redis.ping()).toBe('PONG');
    return redis;
  };

  /** Reconnects, and while the new connection is being made its connector is disconnected, as the detector does. */
  const endedByTheLibrary = async (redis: RedisClient) => {
    const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
    redis.once('connecting', () => (redis as unknown as { connector: { disconnect(): void } }).connector.disconnect());
    redis.disconnect(true);
    await ended;
  };

  it('connects again after ioredis ended it on its own, and answers', async () => {
    const redis = await open();
    await endedByTheLibrary(redis);
    for (const end = Date.now() + 10_000; redis.status !== 'ready'; await sleep(20)) {
      if (Date.now() > end) throw new Error(`still ${redis.status}`);
    }
    expect(await redis.ping()).toBe('PONG');
  }, 20_000);

  it('stays closed once the gateway closes it', async () => {
    const redis = await open();
    redis.disconnect();
    await sleep(500);
    expect(redis.status).toBe('end');
    const quitting = await open();
    await quitting.quit();
    await sleep(500);
    expect(quitting.status).toBe('end');
  }, 20_000);
});
