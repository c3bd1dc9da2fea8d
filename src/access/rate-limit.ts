/**
 * The rates the door keeps, in one table (`RATE_POLICIES`), and the limiter under each: in Redis when
 * REDIS_URL is set and the rate holds across instances, with a memory limiter standing in while Redis
 * is unreachable.
 */
import type { RedisClient as Redis } from '../redis.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Limits } from '../config.js';

interface RatePolicy {
  /** Per subject (a key's hash, or an address) per minute; 0 turns the rate off. */
  perMinute(limits: Readonly<Limits>): number;
  /** The limiter's keys, in Redis or in memory. */
  prefix: string;
  /** Kept in Redis when there is one, so it holds across instances; else each instance keeps its own. */
  acrossInstances: boolean;
}

/** Every rate of the door, by name: what admission.ts takes from, and the `limit` label its refusals are counted under. */
export const RATE_POLICIES = {
  operations: { perMinute: (l) => l.operationsPerMinute, prefix: 'payments-gateway:ops', acrossInstances: true },
  ws_connect: { perMinute: (l) => l.ws.connectsPerMinute, prefix: 'payments-gateway:ws-connect', acrossInstances: false },
  ws_subscribe: { perMinute: (l) => l.streams.subscribesPerMinute, prefix: 'payments-gateway:ws-subscribe', acrossInstances: false },
  sse_subscribe: { perMinute: (l) => l.streams.subscribesPerMinute, prefix: 'payments-gateway:sse-subscribe', acrossInstances: false },
  callback_subscribe: { perMinute: (l) => l.streams.subscribesPerMinute, prefix: 'payments-gateway:callback-subscribe', acrossInstances: false },
  // A key not yet proven opening streams from one address: its refusals count under the stream's own rate.
  unproven_streams: { perMinute: (l) => l.ws.connectsPerMinute, prefix: 'payments-gateway:stream-address', acrossInstances: false },
} as const satisfies Record<string, RatePolicy>;

export type RatePolicyName = keyof typeof RATE_POLICIES;
/** The rates a refusal is counted under (`gateway_rate_limited_total{limit}`). */
export type RateLimitName = Exclude<RatePolicyName, 'unproven_streams'>;

/** One limiter per policy of the table. */
export function createRateLimiters(limits: Readonly<Limits>, redis: Redis | null): Record<RatePolicyName, RateLimiter> {
  const entries = Object.entries(RATE_POLICIES).map(([name, policy]) => [
    name,
    createRateLimiter({ perMinute: policy.perMinute(limits), prefix: policy.prefix, redis: policy.acrossInstances ? redis : null }),
  ]);
  return Object.fromEntries(entries) as Record<RatePolicyName, RateLimiter>;
}

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
