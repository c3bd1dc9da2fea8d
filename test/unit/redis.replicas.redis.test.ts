/**
 * Money writes wait for replicas (src/redis.ts, writeConfirmed) over a real master and replica: confirmed while the
 * replica follows, refused with ReplicaAckError once it is gone, and the idempotency store and the event log refuse
 * rather than act on a write only the master holds.
 */
import { Redis } from 'ioredis';
import { beforeAll, expect, it } from 'vitest';
import { RedisIdempotencyStore } from '../../src/idempotency/redis-store.js';
import { createLogger } from '../../src/logger.js';
import { RedisLinks, ReplicaAckError, writeConfirmed } from '../../src/redis.js';
import { redisTarget } from '../../src/redis-target.js';
import { redisEventLog } from '../../src/realtime/redis-log.js';
import { masterAndReplicaForSuite, type RedisServer } from '../realtime/redis-server.js';
import { describeWith } from '../support/tools.js';

const ACKS = { replicaAcks: 1, replicaAckTimeoutMs: 200 };

describeWith('redis-server', 'writes confirmed on a replica', () => {
  const pair = masterAndReplicaForSuite();
  let master: RedisServer;
  let replica: RedisServer;
  let redis: Redis;
  beforeAll(() => void ({ master, replica, redis } = pair()));

  it('answers the commands\' replies once the replica has them', async () => {
    expect(await writeConfirmed(redis, ACKS, (p) => p.set('confirmed', '1').incr('counter'))).toEqual(['OK', 1]);
    expect(await writeConfirmed(redis, { replicaAcks: 0, replicaAckTimeoutMs: 0 }, (p) => p.get('confirmed'))).toEqual(['1']);
  });

  it('with the replica gone: the store and the log refuse what only the master holds', async () => {
    await replica.kill();
    await expect(writeConfirmed(redis, ACKS, (p) => p.set('alone', '1'))).rejects.toEqual(new ReplicaAckError(1, 0));

    const store = new RedisIdempotencyStore(redis, 'acks:', 100, 60_000, undefined, { acks: ACKS });
    await expect(store.claim('k', 'fp', 60_000, 'A')).rejects.toBeInstanceOf(ReplicaAckError);

    const logger = createLogger('silent');
    const target = { ...redisTarget({ REDIS_URL: master.url })!, ...ACKS };
    const log = await redisEventLog({ target, prefix: 'acks-log:', logger, links: new RedisLinks(logger), maxEvents: 100 });
    try {
      const event = { id: 1, type: 'transaction.approved', object: 'transaction', objectId: 5, accountId: 7, entity: { id: 5, status: 'approved' }, createdAt: '2026-01-01T10:00:00.000Z' };
      await expect(log.append(event)).rejects.toBeInstanceOf(ReplicaAckError);
    } finally {
      await log.close();
    }
  });
});
