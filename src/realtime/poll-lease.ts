/** Who re-reads an object: the holder of its lease, which expires on its own when the holder dies (docs/realtime.md). */
import type { RedisClient as Redis } from '../redis.js';

export interface PollLease {
  acquire(objectKey: string, ttlMs: number): Promise<boolean>;
  release(objectKey: string): Promise<void>;
}

export const soleLease: PollLease = {
  acquire: async () => true,
  release: async () => undefined,
};

/** One round trip, atomic across instances. */
const ACQUIRE_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
if cur == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export function redisLease(redis: Redis, prefix: string, instanceId: string): PollLease {
  const key = (objectKey: string) => `${prefix}poll:${objectKey}`;
  return {
    async acquire(objectKey, ttlMs) {
      return (await redis.eval(ACQUIRE_SCRIPT, 1, key(objectKey), instanceId, Math.max(1, Math.ceil(ttlMs)))) === 1;
    },
    async release(objectKey) {
      await redis.eval(RELEASE_SCRIPT, 1, key(objectKey), instanceId);
    },
  };
}
