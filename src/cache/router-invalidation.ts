/**
 * Pushes each eviction (webhook or mutation) to a router's response cache as a
 * `cache_tag` invalidation, in the background: docs/routers.md, Caching in the router.
 */
import type { Logger } from '../logger.js';
import { kindsWhere } from './entity-kinds.js';
import type { EntityCache, EntityCacheScope, EntityKind } from './index.js';

export const SUBGRAPH_NAME = 'payments';
/** Objects a router may cache with a tag (entity-kinds.ts); the others only expire. */
const TAGGED = kindsWhere((d) => d.routerTag);
const MAX_ATTEMPTS = 4;
const RETRY_BASE_MS = 100;
const ATTEMPT_TIMEOUT_MS = 5_000;
/** Past it a push is dropped (counted): the TTL still bounds staleness. Callers share all but the webhooks' part. */
const MAX_PENDING = 1_000;
/** A share per owner, so a flood against a hanging router drops only its own. */
export const MAX_PENDING_PER_OWNER = MAX_PENDING / 10;
/** The owner of pushes that no caller made: verified webhooks. */
const WEBHOOKS = 'webhooks';

export type InvalidationOutcome = 'sent' | 'retried' | 'failed' | 'dropped';

export interface RouterInvalidationSettings {
  url: string;
  key: string;
}

export interface RouterInvalidation {
  /** `owner`: whose change it is (the caller's id), or absent for a webhook's. */
  push(kind: string, ids: readonly (string | number)[], owner?: string): void;
  drain(): Promise<void>;
}

export function cacheTagOf(kind: string, id: string | number): string {
  return `${kind}-${id}`;
}

export function isTagged(kind: string): boolean {
  return TAGGED.has(kind);
}

export function createRouterInvalidation(
  settings: RouterInvalidationSettings,
  deps: { logger: Logger; observe: (outcome: InvalidationOutcome) => void; retryBaseMs?: number },
): RouterInvalidation {
  const pending = new Set<Promise<void>>();
  const byOwner = new Map<string, number>();
  const retryBaseMs = deps.retryBaseMs ?? RETRY_BASE_MS;

  const send = async (body: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      let retryable: boolean;
      let status: number | undefined;
      try {
        const res = await fetch(settings.url, {
          method: 'POST',
          headers: { authorization: settings.key, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          deps.observe('sent');
          return;
        }
        status = res.status;
        // A refused key or body will be refused again; an overloaded or failing router may recover.
        retryable = res.status === 429 || res.status >= 500;
      } catch {
        retryable = true;
      }
      if (!retryable || attempt >= MAX_ATTEMPTS) {
        deps.observe('failed');
        // The URL and status only: never the key.
        deps.logger.warn({ status, attempts: attempt }, 'router invalidation failed; the cached copies expire with their TTL');
        return;
      }
      deps.observe('retried');
      await new Promise((done) => setTimeout(done, retryBaseMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2)));
    }
  };

  return {
    push(kind, ids, owner = WEBHOOKS) {
      if (!isTagged(kind) || ids.length === 0) return;
      const held = byOwner.get(owner) ?? 0;
      // Callers together leave the webhooks' share free: no flood of mutations drops a webhook's push.
      const callers = pending.size - (byOwner.get(WEBHOOKS) ?? 0);
      if (held >= MAX_PENDING_PER_OWNER || (owner !== WEBHOOKS && callers >= MAX_PENDING - MAX_PENDING_PER_OWNER)) {
        deps.observe('dropped');
        return;
      }
      byOwner.set(owner, held + 1);
      const body = JSON.stringify(ids.map((id) => ({ kind: 'cache_tag', subgraphs: [SUBGRAPH_NAME], cache_tag: cacheTagOf(kind, id) })));
      const done: Promise<void> = send(body).finally(() => {
        pending.delete(done);
        const left = (byOwner.get(owner) ?? 1) - 1;
        if (left === 0) byOwner.delete(owner);
        else byOwner.set(owner, left);
      });
      pending.add(done);
    },
    async drain() {
      await Promise.all([...pending]);
    },
  };
}

export function withRouterInvalidation(cache: EntityCache, router: RouterInvalidation): EntityCache {
  return {
    scope(callerId, options) {
      const inner = cache.scope(callerId, options);
      const evict: EntityCacheScope['evict'] = async (kind: EntityKind, ids) => {
        await inner.evict(kind, ids);
        router.push(kind, ids, callerId);
      };
      return { load: inner.load, put: inner.put, evict };
    },
    async evictObject(kind, id) {
      await cache.evictObject(kind, id);
      if (kind !== null && id !== null) router.push(kind, [id]);
    },
    async close() {
      await router.drain();
      await cache.close();
    },
  };
}
