/**
 * The entity cache: upstream objects kept across requests, under the
 * per-request DataLoaders (a loader miss asks here before the upstream).
 *
 * What may be cached, and for how long:
 * - customers, currencies (each by id) and the currency list: for a TTL
 *   (they change rarely, and a customer's signed webhook evicts it at once);
 *   a list with a malformed item is not kept, its good items are;
 * - transactions and payouts: only in a final state (src/payments/rules.ts),
 *   where the upstream never changes them again; a cached one is checked
 *   again on the way out, so a non-final snapshot is never served.
 * Entries belong to one caller (a hash of the API key): another key, even of
 * the same account, never reads them. Signed webhooks and the gateway's own
 * mutations evict an object for every caller at once.
 */
import type { Logger } from '../logger.js';
import { finalStatuses } from '../payments/rules.js';
import type { ListItem } from '../upstream/index.js';
import { UpstreamInvalidResponseError } from '../upstream/index.js';
import type { CurrencyModel, CustomerModel, PayoutModel, TransactionModel } from '../upstream/index.js';
import type { EntityId, EntityStore } from './store.js';

export { memoryStore } from './store.js';
export { redisStore } from './redis-store.js';
export type { EntityStore } from './store.js';

export interface EntityModels {
  transaction: TransactionModel;
  payout: PayoutModel;
  customer: CustomerModel;
  /** One currency, by its id (`GET /v1/currencies/{id}`, or an item of the list). */
  currency: CurrencyModel;
  /** A caller's whole currency list, under the id `all`; kept only when every item decoded. */
  currencies: ListItem<CurrencyModel>[];
}
export type EntityKind = keyof EntityModels;

/** Objects a webhook or a mutation can name; currencies only expire. */
const EVICTABLE: ReadonlySet<string> = new Set<EntityKind>(['transaction', 'payout', 'customer']);

export interface EntityCacheSettings {
  customerTtlMs: number;
  currencyTtlMs: number;
  /** How long a transaction or payout in a final state is kept. */
  finalTtlMs: number;
}

/** How long a value of each kind may be kept, or 0 when it must not be. */
export type EntityTtlPolicy = { readonly [K in EntityKind]: (value: EntityModels[K]) => number };

/**
 * The TTL policy, decided once per cache: the final statuses are taken from the payment rules
 * here, so a read tests a set and asks nothing further of them.
 */
export function entityTtlPolicy(settings: EntityCacheSettings): EntityTtlPolicy {
  const final = finalStatuses();
  // Upper case is how the rules compare (isFinalTransaction): the same answer for any spelling.
  const finalTtl = (statuses: ReadonlySet<string>) => (status: string) => (statuses.has(status) || statuses.has(status.toUpperCase()) ? settings.finalTtlMs : 0);
  const transaction = finalTtl(final.transaction);
  const payout = finalTtl(final.payout);
  return {
    transaction: (value) => transaction(value.status),
    payout: (value) => payout(value.status),
    customer: () => settings.customerTtlMs,
    currency: () => settings.currencyTtlMs,
    // An error in the list is this read's answer, not a fact to keep (nor one Redis could hold).
    currencies: (value) => (value.some((c) => c instanceof UpstreamInvalidResponseError) ? 0 : settings.currencyTtlMs),
  };
}

/** One operation's view of the cache: one caller, read or bypassed. */
export interface EntityCacheScope {
  /**
   * Values by id, in order: cached ones first, `fetch` for the rest (in
   * parallel); what may be cached is written back. A failed fetch is an
   * Error in its place, an unknown id `null` (neither is cached).
   */
  load<K extends EntityKind>(kind: K, ids: readonly EntityId[], fetch: (id: EntityId) => Promise<EntityModels[K] | null>): Promise<(EntityModels[K] | null | Error)[]>;
  /**
   * Values learnt by another read (the currency list warms the currencies by
   * id): written as `load` would write them, with no upstream call.
   */
  put<K extends EntityKind>(kind: K, entries: readonly { id: EntityId; value: EntityModels[K] }[]): Promise<void>;
  /** The object changed through this gateway: no caller reads the old copy again. */
  evict(kind: EntityKind, ids: readonly EntityId[]): Promise<void>;
}

export interface EntityCache {
  /**
   * `bypass`: the caller asked for fresh data (`Cache-Control: no-cache`): nothing is read from or written to the cache; evictions still apply.
   * `refresh`: the caller's key is not proven lately: nothing is served from the cache, what the upstream answers is written as usual.
   */
  scope(callerId: string, options?: { bypass?: boolean; refresh?: boolean }): EntityCacheScope;
  /** A signed webhook named this object: evicted for every caller before the webhook is acknowledged. */
  evictObject(kind: string | null, id: number | null): Promise<void>;
  close(): Promise<void>;
}

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

function fetchAll<T>(ids: readonly EntityId[], fetch: (id: EntityId) => Promise<T | null>): Promise<(T | null | Error)[]> {
  return Promise.all(ids.map((id) => fetch(id).catch(asError)));
}

/** No cache at all (ENTITY_CACHE=false): every load goes to the upstream. */
export const uncached: EntityCacheScope = {
  load: (_kind, ids, fetch) => fetchAll(ids, fetch),
  put: async () => undefined,
  evict: async () => undefined,
};

export function createEntityCache(store: EntityStore | null, settings: EntityCacheSettings, logger: Logger): EntityCache {
  const policy = entityTtlPolicy(settings);
  // A kind the policy does not name is never kept.
  const ttlFor = <K extends EntityKind>(kind: K, value: EntityModels[K]): number => (policy[kind] as ((v: EntityModels[K]) => number) | undefined)?.(value) ?? 0;
  // A cache that fails is a cache that misses: the request goes on to the upstream.
  let warned = 0;
  const failed = (what: string) => (error: unknown) => {
    const now = Date.now();
    if (now - warned > 10_000) {
      warned = now;
      logger.warn({ err: { message: asError(error).message }, what }, 'entity cache unavailable; reading the upstream');
    }
    return null;
  };

  function scope(callerId: string, bypass: boolean, refresh: boolean): EntityCacheScope {
    if (!store) return uncached;
    const cache = store;
    const evict: EntityCacheScope['evict'] = async (kind, ids) => {
      await cache.evict(kind, ids).catch(failed('evict'));
    };
    // Fresh reads, but what this operation changes is still evicted for everyone.
    if (bypass) return { load: (_kind, ids, fetch) => fetchAll(ids, fetch), put: uncached.put, evict };
    return {
      evict,
      async put(kind, values) {
        const kept = values.filter(({ value }) => ttlFor(kind, value) > 0);
        if (kept.length === 0) return;
        // The generations guard these writes as they guard load's: an eviction since wins.
        const read = await cache.read(callerId, kind, kept.map((e) => e.id)).catch(failed('read'));
        if (!read) return;
        const entries = kept.map(({ id, value }, i) => ({ id, value, ttlMs: ttlFor(kind, value), generation: read.generations[i] ?? null }));
        await cache.write(callerId, kind, entries).catch(failed('write'));
      },
      async load(kind, ids, fetch) {
        const read = await cache.read(callerId, kind, ids).catch(failed('read'));
        const results: (EntityModels[typeof kind] | null | Error)[] = new Array(ids.length);
        const missing: number[] = [];
        ids.forEach((_, i) => {
          const value = refresh ? undefined : (read?.values[i] as EntityModels[typeof kind] | undefined);
          // Checked again on the way out: only what may be cached now is served.
          if (value !== undefined && ttlFor(kind, value) > 0) results[i] = value;
          else missing.push(i);
        });
        if (missing.length === 0) return results;
        const fetched = await fetchAll(missing.map((i) => ids[i]!), fetch);
        const entries = [];
        for (const [n, i] of missing.entries()) {
          const value = fetched[n]!;
          results[i] = value;
          if (!read || value === null || value instanceof Error) continue;
          const ttlMs = ttlFor(kind, value);
          if (ttlMs > 0) entries.push({ id: ids[i]!, value, ttlMs, generation: read.generations[i] ?? null });
        }
        if (entries.length > 0) await cache.write(callerId, kind, entries).catch(failed('write'));
        return results;
      },
    };
  }

  return {
    scope: (callerId, options = {}) => scope(callerId, options.bypass ?? false, options.refresh ?? false),
    async evictObject(kind, id) {
      if (!store || kind === null || id === null || !EVICTABLE.has(kind)) return;
      // Not caught: the webhook is answered 503 and redelivered rather than leave a stale copy.
      await store.evict(kind, [id]);
    },
    close: async () => store?.close(),
  };
}
