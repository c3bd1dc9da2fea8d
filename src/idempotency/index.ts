/** Idempotent mutations: the resolver guard and the record stores (memory, on disk without Redis, or Redis when REDIS_URL is set). */
export { idempotent, fingerprint, canonicalJson, recordKeyFor, idempotencyKeyReused, idempotencyInProgress } from './guard.js';
export type { IdempotencyOutcome, IdempotencyScope, IdempotencySettings, IdempotentCall } from './guard.js';
export { MemoryIdempotencyStore } from './store.js';
export type { Claim, IdempotencyStore } from './store.js';
export { RedisIdempotencyStore } from './redis-store.js';
export { IDEMPOTENCY_PARTITIONS, idempotencyKeys } from './redis-keys.js';
export { checkIdempotencyRedis, RedisNotPersistentError } from './redis-check.js';
export type { DiskIdempotencyStore } from './disk-store.js';
/** The disk store loads lmdb's native module: only a gateway without Redis pays its memory. */
export const loadDiskStore = async () => (await import('./disk-store.js')).DiskIdempotencyStore;
export { RedisContinuity } from './redis-continuity.js';
export type { StoreCondition } from './store.js';
