/**
 * Whether the gateway hears every change of a pending object, asked on each read: only then may one be
 * kept (docs/performance.md, Pending objects under webhook control).
 */
import type { RedisLinks, RedisRole, RedisTarget } from '../redis.js';

/** Evictions land in the entity cache's connection; webhooks are recorded, and re-reads leased, over the bus's. */
export const EVENT_PATH_ROLES: readonly RedisRole[] = Object.freeze(['entity-cache', 'bus-publisher', 'bus-subscriber']);

/** No secret: no webhook is verified, so none evicts. With Redis: every role above is up (what /readyz reports). */
export function hearsChanges(webhookSecrets: readonly string[], redis: RedisTarget | null, links: Pick<RedisLinks, 'state'>): () => boolean {
  if (webhookSecrets.length === 0) return () => false;
  if (!redis) return () => true;
  return () => {
    const state = links.state();
    return EVENT_PATH_ROLES.every((role) => state[role] === true);
  };
}
