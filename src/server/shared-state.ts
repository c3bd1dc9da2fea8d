/**
 * What instances share when they share REDIS_URL (rate limits, revocations, the entity cache,
 * idempotency records), or its in-memory stand-in for one instance.
 */
import type { RedisClient as Redis } from '../redis.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { STATE_PREFIX, type RedisLinks } from '../redis.js';
import { KeyStatus, localRevocations, redisRevocations, type RevocationChannel } from '../access/key-status.js';
import { createRouterInvalidation, withRouterInvalidation } from '../cache/router-invalidation.js';
import { MemoryIdempotencyStore, type IdempotencyStore } from '../idempotency/index.js';
import type { Observability } from '../observability/index.js';
import { createEntityCache, memoryStore, redisStore, type EntityCache } from '../cache/index.js';
import { hearsChanges } from '../cache/event-path.js';

export async function startSharedState(config: Readonly<Config>, links: RedisLinks, logger: Logger, observability: Observability, given?: IdempotencyStore) {
  const { callerMaxBytes, maxBytes } = config.idempotency;
  const ownStore = given ? null : new MemoryIdempotencyStore(undefined, undefined, callerMaxBytes, maxBytes);
  const shared = await sharedLimitState(config, links, logger);
  const keys = new KeyStatus({ rejectedTtlMs: config.limits.rejectedKeyTtlMs, revalidateMs: config.limits.keyRevalidateMs, channel: shared.revocations });
  // Every eviction (a verified webhook, a mutation) also told to the router's response cache, when one is set.
  const routerSettings = config.graphql.routerInvalidation;
  const withRouter = (cache: EntityCache) =>
    routerSettings ? withRouterInvalidation(cache, createRouterInvalidation(routerSettings, { logger, observe: (o) => observability.routerInvalidation(o) })) : cache;
  return {
    shared,
    keys,
    entityCache: withRouter(await startEntityCache(config, links, logger)),
    idempotencyStore: (given ?? ownStore!) as IdempotencyStore,
    closeOwnStore: async () => ownStore?.close(),
  };
}

async function sharedLimitState(config: Readonly<Config>, links: RedisLinks, logger: Logger): Promise<{ redis: Redis | null; revocations: RevocationChannel }> {
  if (!config.redis) return { redis: null, revocations: localRevocations };
  const redis = links.open(config.redis, 'limits');
  const subscriber = links.open(config.redis, 'key-news');
  await subscriber.connect();
  return { redis, revocations: await redisRevocations(redis, subscriber, `${STATE_PREFIX}keys:revoked`, logger) };
}

// v2: the codec escapes data keys that look like its Decimal tag; entries of the version before are not read.
const CACHE_PREFIX = `${STATE_PREFIX}cache:v2:`;

async function startEntityCache(config: Readonly<Config>, links: RedisLinks, logger: Logger): Promise<EntityCache> {
  const { customerTtlMs, finalTtlMs, pendingMaxAgeMs } = config.entityCache;
  const settings = { customerTtlMs, currencyTtlMs: config.currencyCacheTtlMs, finalTtlMs, pendingMaxAgeMs };
  // Pending objects are kept only while a change of theirs is sure to be heard: asked on each read.
  const options = { hearsChanges: hearsChanges(config.webhookSecrets, config.redis, links) };
  if (!config.entityCache.enabled) return createEntityCache(null, settings, logger, options);
  const { maxObjects, maxBytes, maxEntryBytes } = config.entityCache;
  if (!config.redis) return createEntityCache(memoryStore(maxObjects, Date.now, { maxBytes, maxEntryBytes }), settings, logger, options);
  // No offline queue (redis.ts): while Redis reconnects, reads miss at once instead of waiting for it.
  const redis = links.open(config.redis, 'entity-cache');
  await redis.connect();
  const longest = Math.max(settings.customerTtlMs, settings.currencyTtlMs, settings.finalTtlMs, settings.pendingMaxAgeMs);
  return createEntityCache(redisStore({ redis, prefix: CACHE_PREFIX, generationTtlMs: longest + 60_000, maxEntryBytes }), settings, logger, options);
}
