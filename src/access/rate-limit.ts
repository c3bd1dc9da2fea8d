/**
 * Operations per API key per minute: in Redis when REDIS_URL is set so the limit holds across
 * instances, with a memory limiter standing in while Redis is unreachable.
 */
import type { RedisClient as Redis } from '../redis.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiter {
  take(subject: string): Promise<RateDecision>;
}

export function createRateLimiter(options: { perMinute: number; prefix: string; redis: Redis | null }): RateLimiter {
  if (options.perMinute <= 0) return { take: async () => ({ allowed: true }) };
  const settings = { points: options.perMinute, duration: 60, keyPrefix: options.prefix };
  const memory = new RateLimiterMemory(settings);
  const limiter: RateLimiterAbstract = options.redis
    ? new RateLimiterRedis({ ...settings, storeClient: options.redis, insuranceLimiter: memory })
    : memory;
  return {
    async take(subject) {
      try {
        await limiter.consume(subject, 1);
        return { allowed: true };
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) };
        throw refusal;
      }
    },
  };
}
