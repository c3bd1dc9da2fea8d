/**
 * Who re-reads an object: the holder of its lease. With one instance it is
 * always this one. With several sharing Redis, the first instance with a
 * subscriber of the object takes the lease and renews it at each re-read;
 * the others only check it. The lease expires on its own when its holder
 * dies or stops renewing, and the next instance to check takes it, so
 * ownership moves without anyone announcing a death.
 */
import type { Redis } from 'ioredis';

export interface PollLease {
  /** Takes the lease, or renews it when this instance holds it, for `ttlMs`; false when another instance holds it. */
  acquire(objectKey: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if this instance holds it, so another instance takes over at its next check. */
  release(objectKey: string): Promise<void>;
}

export const soleLease: PollLease = {
  acquire: async () => true,
  release: async () => undefined,
};

/** Take if free, renew if ours, else refuse: one round trip, atomic across instances. */
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
