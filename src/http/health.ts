/**
 * `/healthz` (alive, with subscription counts and the cost of reconciliation)
 * and `/readyz` (in the pool or draining, with breaker states).
 */
import type http from 'node:http';
import type { BreakerState } from '../upstream/index.js';
import { sendJson } from './body.js';

export interface HealthSources {
  subscriptions(): Record<string, number>;
  reconcile(): Record<string, number>;
  breakers(): Record<string, BreakerState>;
  draining(): boolean;
}

export function healthz(sources: HealthSources) {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => sendJson(res, 200, { status: 'ok', subscriptions: sources.subscriptions(), reconcile: sources.reconcile() });
}

export function readyz(sources: HealthSources) {
  // An open breaker is reported, not a reason to leave the pool: every instance shares the upstream.
  return (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const draining = sources.draining();
    sendJson(res, draining ? 503 : 200, { status: draining ? 'draining' : 'ready', breakers: sources.breakers() });
  };
}
