/**
 * State shared by every instance when they share REDIS_URL. Every Redis
 * connection the gateway opens is made here, each with the options its use
 * needs, and every key lives under one prefix, so one `SCAN MATCH
 * payments-gateway:*` or one ACL rule covers all of it.
 *
 * One exception: idempotency records keep the `gateway:idempotency:` prefix
 * they were first written under. They outlive a deploy (24 h) and guard
 * against charging twice; a new prefix would orphan the records of retries
 * in flight during a rolling deploy.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

export const STATE_PREFIX = 'payments-gateway:';

export type RedisRole = 'limits' | 'key-news' | 'entity-cache' | 'idempotency' | 'bus-publisher' | 'bus-subscriber';

const OPTIONS: Readonly<Record<RedisRole, RedisOptions>> = {
  // Rate limits fall back to memory while Redis is away: fail fast, queue nothing.
  limits: { maxRetriesPerRequest: 1, enableOfflineQueue: false },
  // A subscribed connection runs no other command.
  'key-news': { lazyConnect: true },
  // A slow cache must cost less than the upstream call it saves: fail fast, read the upstream.
  'entity-cache': { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 500, enableOfflineQueue: false },
  idempotency: { maxRetriesPerRequest: 2 },
  'bus-publisher': { lazyConnect: true, maxRetriesPerRequest: 2 },
  'bus-subscriber': { lazyConnect: true },
};

const WHAT_FAILS: Readonly<Record<RedisRole, string>> = {
  limits: 'rate-limit store unreachable; limiting in memory meanwhile',
  'key-news': 'key revocations not shared: redis unreachable',
  'entity-cache': 'entity cache store unreachable',
  idempotency: 'idempotency store unreachable',
  'bus-publisher': 'redis connection error',
  'bus-subscriber': 'redis connection error',
};

/** A connection for one use, its errors logged (never thrown at the process). Lazy ones connect on `connect()`. */
export function openRedis(url: string, role: RedisRole, logger: Logger): Redis {
  const redis = new Redis(url, OPTIONS[role]);
  redis.on('error', (error: Error) => logger.warn({ err: { message: error.message }, client: role }, WHAT_FAILS[role]));
  return redis;
}
