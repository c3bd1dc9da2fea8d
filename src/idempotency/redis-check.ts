/** Checked at start: only append-only persistence keeps the records a retry of an in-flight payment relies on. */
import type { Cluster } from 'ioredis';
import type { RedisClient as Redis } from '../redis.js';
import type { Logger } from '../logger.js';

/** Policies that never drop a running claim ahead of old finished records. */
const SUITED_POLICIES = new Set(['volatile-lru', 'volatile-lfu', 'allkeys-lru', 'allkeys-lfu']);

export class RedisNotPersistentError extends Error {
  constructor(reason: string) {
    super(`The idempotency Redis ${reason}; set appendonly yes on it, or IDEMPOTENCY_REDIS_PERSISTENCE=warn to start anyway.`);
    this.name = 'RedisNotPersistentError';
  }
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** `require` rejects without append-only persistence; `warn` logs. A policy that may drop running claims is warned about. */
export async function checkIdempotencyRedis(redis: Redis, mode: 'require' | 'warn', logger: Logger): Promise<void> {
  // On a cluster every master holds records: each is asked (a connected Cluster knows its masters).
  if (redis.isCluster) {
    const cluster = redis as Cluster;
    await cluster.ping().catch(() => undefined);
    const masters = cluster.nodes('master');
    if (masters.length === 0 && mode === 'require') throw new RedisNotPersistentError('cluster answered with no master');
    for (const master of masters) await checkIdempotencyRedis(master, mode, logger);
    return;
  }
  const [persistence, memory] = await Promise.all([redis.info('persistence'), redis.info('memory')]).catch(() => [undefined, undefined]);
  const aof = persistence === undefined ? undefined : infoField(persistence, 'aof_enabled');
  const problem = aof === undefined ? 'does not say whether append-only persistence is on (INFO persistence)' : aof === '1' ? null : 'has append-only persistence off (appendonly no): a restart loses records of payments in flight';
  if (memory !== undefined) {
    const policy = infoField(memory, 'maxmemory_policy');
    if (infoField(memory, 'maxmemory') === '0') logger.warn({ policy }, 'idempotency Redis has no maxmemory: set one, with maxmemory-policy volatile-lru (docs/security.md)');
    else if (policy && !SUITED_POLICIES.has(policy)) logger.warn({ policy }, 'idempotency Redis maxmemory-policy may refuse claims or drop running ones when full: use volatile-lru (docs/security.md)');
  }
  if (problem === null) return;
  if (mode === 'require') throw new RedisNotPersistentError(problem);
  logger.error({ check: 'IDEMPOTENCY_REDIS_PERSISTENCE' }, `idempotency Redis ${problem}`);
}
