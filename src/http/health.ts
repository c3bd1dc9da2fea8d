/** `/healthz` and `/readyz`: anyone gets the status, only those `OpsAccess` allows get the counts and states. */
import type http from 'node:http';
import type { BreakerState } from '../upstream/index.js';
import type { StoreCondition } from '../idempotency/index.js';
import { sendJson } from './body.js';
import type { OpsAccess } from './ops-access.js';

export interface HealthSources {
  subscriptions(): Record<string, number>;
  reconcile(): Record<string, number>;
  connections(): Record<string, number>;
  breakers(): Record<string, BreakerState>;
  /** Each Redis connection role: up or not; empty without REDIS_URL. */
  redis(): Partial<Record<string, boolean>>;
  /** The idempotency store's quarantine after Redis lost records; undefined for stores that cannot lose them. */
  idempotency?(): StoreCondition | undefined;
  draining(): boolean;
}

export function healthz(sources: HealthSources, access: OpsAccess) {
  return (req: http.IncomingMessage, res: http.ServerResponse) =>
    sendJson(res, 200, access.allows(req) ? { status: 'ok', subscriptions: sources.subscriptions(), reconcile: sources.reconcile(), connections: sources.connections() } : { status: 'ok' });
}

export function readyz(sources: HealthSources, access: OpsAccess) {
  // An open breaker or a lost Redis is reported, not a reason to leave the pool: every instance shares
  // the upstream and the Redis, so all would leave at once (docs/deployment.md).
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const draining = sources.draining();
    const status = draining ? 'draining' : 'ready';
    sendJson(res, draining ? 503 : 200, access.allows(req) ? { status, breakers: sources.breakers(), ...detail(sources) } : { status });
  };
}

function detail(sources: HealthSources): Record<string, unknown> {
  const redis = redisDetail(sources.redis());
  const condition = sources.idempotency?.();
  if (!condition) return redis;
  const quarantined = condition.quarantinedUntil !== null;
  const idempotency = quarantined
    ? { state: 'quarantined', until: new Date(condition.quarantinedUntil!).toISOString(), reason: condition.reason, losses: condition.losses }
    : { state: 'ok', losses: condition.losses };
  const degraded = [...((redis.degraded as string[] | undefined) ?? []), ...(quarantined ? ['idempotency'] : [])];
  return { ...redis, idempotency, ...(degraded.length > 0 ? { degraded } : {}) };
}

function redisDetail(roles: Partial<Record<string, boolean>>): Record<string, unknown> {
  const entries = Object.entries(roles);
  if (entries.length === 0) return {};
  const redis = Object.fromEntries(entries.map(([role, up]) => [role, up ? 'up' : 'down']));
  return entries.every(([, up]) => up) ? { redis } : { redis, degraded: ['redis'] };
}

/** Production without OPS_TOKEN: no one may read `/metrics` on the public port, and the operator is told why. */
export const METRICS_CLOSED =
  'closed until OPS_TOKEN is set: set OPS_TOKEN (16 characters or more) and send it as "Authorization: Bearer <OPS_TOKEN>", or set METRICS_PORT for a listener of its own';

/** `/metrics` on the public port: to those `access` allows; 401 to others when a token could be sent, 403 saying OPS_TOKEN is needed when none could. */
export function guardedMetrics(route: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>, access: OpsAccess) {
  return (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | void => {
    if (access.allows(req)) return route(req, res);
    if (access.closed) return sendJson(res, 403, { error: `metrics are ${METRICS_CLOSED}` });
    res.setHeader('www-authenticate', 'Bearer realm="operations"');
    sendJson(res, 401, { error: 'the operations token is required' });
  };
}
