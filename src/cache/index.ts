/** The entity cache, per caller, under the per-request DataLoaders: docs/performance.md, Entity cache. */
import type { Logger } from '../logger.js';
import { finalStatuses } from '../payments/rules.js';
import { UpstreamInvalidResponseError } from '../upstream/index.js';
import type { PayoutModel, TransactionModel } from '../upstream/index.js';
import { ENTITY_KINDS, kindsWhere, type DeclaredModels } from './entity-kinds.js';
import { inFlightReads } from './in-flight.js';
import type { EntityId, EntityStore } from './store.js';

export { ENTITY_KINDS, TAGGED_ROOT_FIELDS, typeTtls } from './entity-kinds.js';
export { memoryStore } from './store.js';
export { redisStore } from './redis-store.js';
export type { EntityStore } from './store.js';

/** What the cache holds under one id of each kind, as declared in entity-kinds.ts. */
export type EntityModels = DeclaredModels;
export type EntityKind = keyof EntityModels;

/** Objects a webhook or a mutation can name (entity-kinds.ts); the others only expire. */
const EVICTABLE = kindsWhere((d) => d.evictable);

export interface EntityCacheSettings {
  customerTtlMs: number;
  currencyTtlMs: number;
  finalTtlMs: number;
  /** A transaction or payout not final yet, while the gateway hears its changes (`hearsChanges`); 0 or absent: never. */
  pendingMaxAgeMs?: number;
}

export interface EntityCacheOptions {
  /** Webhooks configured and the event path up, asked on each read: otherwise a pending object is read upstream. */
  hearsChanges?: () => boolean;
  /** The clock a pending copy's age is read by: the store's. */
  now?: () => number;
}

/** How long a value of each kind may be kept, or 0 when it must not be. */
export type EntityTtlPolicy = { readonly [K in EntityKind]: (value: EntityModels[K]) => number };

/** The kinds whose objects wait on a payer: kept while final, or while pending under webhook control. */
export type PendingKind = 'transaction' | 'payout';
const PENDING_KINDS: ReadonlySet<string> = new Set<PendingKind>(['transaction', 'payout']);
export const isPendingKind = (kind: string): kind is PendingKind => PENDING_KINDS.has(kind);

/** Upper case is how the rules compare (isFinalTransaction): the same answer for any spelling. */
const within = (statuses: ReadonlySet<string>) => (status: string) => statuses.has(status) || statuses.has(status.toUpperCase());

/** The payment rules' final statuses, read once: a read asks the rules nothing. */
export function finalTests(): { readonly [K in PendingKind]: (status: string) => boolean } {
  const final = finalStatuses();
  return { transaction: within(final.transaction), payout: within(final.payout) };
}

/** Decided once per cache: a read tests a set of final statuses and asks the payment rules nothing. */
export function entityTtlPolicy(settings: EntityCacheSettings, hearsChanges: () => boolean = () => false, final = finalTests()): EntityTtlPolicy {
  const pendingMs = settings.pendingMaxAgeMs ?? 0;
  const pending = () => (pendingMs > 0 && hearsChanges() ? pendingMs : 0);
  const ttl = (isFinal: (status: string) => boolean) => (status: string) => (isFinal(status) ? settings.finalTtlMs : pending());
  const fixed = { customer: settings.customerTtlMs, currency: settings.currencyTtlMs };
  const policy: Record<string, (value: unknown) => number> = {};
  for (const [kind, { ttl: bound }] of Object.entries(ENTITY_KINDS)) {
    if (bound === 'final') {
      if (!isPendingKind(kind)) throw new Error(`entity kind ${kind}: only a transaction or a payout is kept while final`);
      const byStatus = ttl(final[kind]);
      policy[kind] = (value) => byStatus((value as { status: string }).status);
    } else {
      const ms = fixed[bound];
      // An error in a list is this read's answer, not a fact to keep (nor one Redis could hold).
      policy[kind] = (value) => (Array.isArray(value) && value.some((c) => c instanceof UpstreamInvalidResponseError) ? 0 : ms);
    }
  }
  return policy as unknown as EntityTtlPolicy;
}

export interface EntityCacheScope {
  /** A failed fetch is an Error in its place, an unknown id `null`; neither is cached. */
  load<K extends EntityKind>(kind: K, ids: readonly EntityId[], fetch: (id: EntityId) => Promise<EntityModels[K] | null>): Promise<(EntityModels[K] | null | Error)[]>;
  /** Values learnt by another read (the currency list warms the currencies by id). */
  put<K extends EntityKind>(kind: K, entries: readonly { id: EntityId; value: EntityModels[K] }[]): Promise<void>;
  evict(kind: EntityKind, ids: readonly EntityId[]): Promise<void>;
}

export interface ScopeOptions {
  /** `Cache-Control: no-cache`: no read, no write; evictions still apply. */
  bypass?: boolean;
  /** Key not proven lately: nothing served from the cache nor joined in flight, answers written as usual. */
  refresh?: boolean;
  /** Told each pending object this scope's reads answered while it may be kept: a poll to reconcile. */
  polled?: (kind: PendingKind, value: TransactionModel | PayoutModel) => void;
}

export interface EntityCache {
  scope(callerId: string, options?: ScopeOptions): EntityCacheScope;
  /** For every caller, before the webhook is acknowledged. */
  evictObject(kind: string | null, id: number | null): Promise<void>;
  close(): Promise<void>;
}

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

function fetchAll<T>(ids: readonly EntityId[], fetch: (id: EntityId) => Promise<T | null>): Promise<(T | null | Error)[]> {
  return Promise.all(ids.map((id) => fetch(id).catch(asError)));
}

export const uncached: EntityCacheScope = {
  load: (_kind, ids, fetch) => fetchAll(ids, fetch),
  put: async () => undefined,
  evict: async () => undefined,
};

export function createEntityCache(store: EntityStore | null, settings: EntityCacheSettings, logger: Logger, options: EntityCacheOptions = {}): EntityCache {
  const hears = options.hearsChanges ?? (() => false);
  const now = options.now ?? Date.now;
  const final = finalTests();
  const policy = entityTtlPolicy(settings, hears, final);
  const inFlight = inFlightReads();
  // Pending objects are shared in flight only while they may be kept: otherwise every poll reads, as it did.
  const sharable = (kind: EntityKind) => !isPendingKind(kind) || hears();
  const isPending = (kind: EntityKind, value: unknown): boolean => isPendingKind(kind) && !final[kind]((value as { status: string }).status);
  // Whoever wrote it (another instance, another version, a longer max age): a pending copy older than ours is not served.
  const servable = <K extends EntityKind>(kind: K, value: EntityModels[K], writtenAt: number | undefined): boolean =>
    ttlFor(kind, value) > 0 && (!isPending(kind, value) || (writtenAt !== undefined && now() - writtenAt <= (settings.pendingMaxAgeMs ?? 0)));
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

  function scope(callerId: string, { bypass = false, refresh = false, polled }: ScopeOptions): EntityCacheScope {
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
          // Checked again on the way out: a pending snapshot only while changes are heard, and within its max age.
          if (value !== undefined && servable(kind, value, read?.writtenAt?.[i])) results[i] = value;
          else missing.push(i);
        });
        if (missing.length > 0) {
          const joined = new Set<number>();
          const releases: (() => void)[] = [];
          try {
            const fetched = await Promise.all(
              missing.map((i) => {
                const id = ids[i]!;
                const generation = read?.generations[i] ?? null;
                const shared = read !== null && sharable(kind);
                const other = shared && !refresh ? inFlight.join(callerId, kind, id, generation) : undefined;
                if (other) {
                  joined.add(i);
                  // Its failure was another operation's (deadline, budget): this one asks for itself.
                  return (other as Promise<EntityModels[typeof kind] | null>).catch(() => fetch(id)).catch(asError);
                }
                const own = fetch(id);
                if (shared) releases.push(inFlight.lead(callerId, kind, id, generation, own));
                return own.catch(asError);
              }),
            );
            const entries = [];
            for (const [n, i] of missing.entries()) {
              const value = fetched[n]!;
              results[i] = value;
              // A joined answer is written by the read that fetched it.
              if (!read || joined.has(i) || value === null || value instanceof Error) continue;
              const ttlMs = ttlFor(kind, value);
              if (ttlMs > 0) entries.push({ id: ids[i]!, value, ttlMs, generation: read.generations[i] ?? null });
            }
            if (entries.length > 0) await cache.write(callerId, kind, entries).catch(failed('write'));
          } finally {
            for (const release of releases) release();
          }
        }
        if (polled && isPendingKind(kind)) tellPolled(kind, results, polled);
        return results;
      },
    };
  }

  /** The pending objects among a read's answers, while they may be kept (final ones need no re-read). */
  function tellPolled(kind: PendingKind, results: readonly unknown[], polled: NonNullable<ScopeOptions['polled']>): void {
    if (!((settings.pendingMaxAgeMs ?? 0) > 0 && hears())) return;
    for (const value of results) {
      if (value === null || value instanceof Error || typeof value !== 'object') continue;
      const object = value as TransactionModel | PayoutModel;
      if (!final[kind](object.status)) polled(kind, object);
    }
  }

  return {
    scope: (callerId, options = {}) => scope(callerId, options),
    async evictObject(kind, id) {
      if (!store || kind === null || id === null || !EVICTABLE.has(kind)) return;
      // Not caught: the webhook is answered 503 and redelivered rather than leave a stale copy.
      await store.evict(kind, [id]);
    },
    close: async () => store?.close(),
  };
}
