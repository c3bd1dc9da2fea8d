/** /healthz, /readyz and the guarded /metrics: the status for anyone, the detail for the ops token only. */
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { guardedMetrics, healthz, METRICS_CLOSED, readyz, type HealthSources } from '../../../src/http/health.js';
import { opsAccess } from '../../../src/http/ops-access.js';

const TOKEN = 'ops-token-0123456789abcdef';
const asking = (token?: string) => ({ headers: token ? { authorization: `Bearer ${token}` } : {} }) as http.IncomingMessage;

/** A response that records what the route wrote. */
function answer() {
  const got = { status: 0, headers: {} as Record<string, unknown>, body: undefined as unknown };
  const res = {
    setHeader: (name: string, value: unknown) => void (got.headers[name] = value),
    writeHead: (status: number, headers: Record<string, unknown>) => void Object.assign(got, { status, headers: { ...got.headers, ...headers } }),
    end: (text: string) => void (got.body = JSON.parse(text)),
  } as unknown as http.ServerResponse;
  return { res, got };
}

function sources(overrides: Partial<HealthSources> = {}): HealthSources {
  return {
    subscriptions: () => ({ live: 2 }),
    reconcile: () => ({ watched: 1 }),
    connections: () => ({ open: 3 }),
    breakers: () => ({ 'GET /v1/customers/:id': 'closed' }),
    redis: () => ({}),
    draining: () => false,
    ...overrides,
  };
}

describe('healthz', () => {
  it('tells anyone the status and only the token\'s bearer the counts', () => {
    const route = healthz(sources(), opsAccess(false, TOKEN));
    const stranger = answer();
    route(asking(), stranger.res);
    expect([stranger.got.status, stranger.got.body]).toEqual([200, { status: 'ok' }]);
    const ops = answer();
    route(asking(TOKEN), ops.res);
    expect(ops.got.body).toEqual({ status: 'ok', subscriptions: { live: 2 }, reconcile: { watched: 1 }, connections: { open: 3 } });
  });
});

describe('readyz', () => {
  const ops = opsAccess(false, TOKEN);

  it('is 200 ready, and 503 draining once shutdown begins', () => {
    const ready = answer();
    readyz(sources(), ops)(asking(), ready.res);
    expect([ready.got.status, ready.got.body]).toEqual([200, { status: 'ready' }]);
    const draining = answer();
    readyz(sources({ draining: () => true }), ops)(asking(), draining.res);
    expect([draining.got.status, draining.got.body]).toEqual([503, { status: 'draining' }]);
  });

  it('reports an open breaker and a lost Redis as detail and degraded, still ready', () => {
    const seen = answer();
    readyz(sources({ breakers: () => ({ 'GET /v1/payouts': 'open' }), redis: () => ({ commands: true, subscriber: false }) }), ops)(asking(TOKEN), seen.res);
    expect(seen.got.status).toBe(200);
    expect(seen.got.body).toEqual({ status: 'ready', breakers: { 'GET /v1/payouts': 'open' }, redis: { commands: 'up', subscriber: 'down' }, degraded: ['redis'] });
    const healthy = answer();
    readyz(sources({ redis: () => ({ commands: true }) }), ops)(asking(TOKEN), healthy.res);
    expect(healthy.got.body).toEqual({ status: 'ready', breakers: { 'GET /v1/customers/:id': 'closed' }, redis: { commands: 'up' } });
  });

  it('says when the idempotency store is quarantined, until when and why', () => {
    const until = Date.parse('2026-12-02T03:00:00Z');
    const quarantined = answer();
    readyz(sources({ idempotency: () => ({ quarantinedUntil: until, losses: 1, reason: 'records lost' }) }), ops)(asking(TOKEN), quarantined.res);
    expect(quarantined.got.body).toMatchObject({ idempotency: { state: 'quarantined', until: '2026-12-02T03:00:00.000Z', reason: 'records lost', losses: 1 }, degraded: ['idempotency'] });
    const ok = answer();
    readyz(sources({ idempotency: () => ({ quarantinedUntil: null, losses: 2, reason: null }) }), ops)(asking(TOKEN), ok.res);
    expect(ok.got.body).toEqual({ status: 'ready', breakers: { 'GET /v1/customers/:id': 'closed' }, idempotency: { state: 'ok', losses: 2 } });
  });
});

describe('guardedMetrics', () => {
  const metrics = async (_req: http.IncomingMessage, res: http.ServerResponse) => void res.end('{"metrics":true}');

  it('serves the token\'s bearer, and asks others for the token with 401', async () => {
    const route = guardedMetrics(metrics, opsAccess(true, TOKEN));
    const ops = answer();
    await route(asking(TOKEN), ops.res);
    expect(ops.got.body).toEqual({ metrics: true });
    const stranger = answer();
    await route(asking('wrong-token-0123456789'), stranger.res);
    expect([stranger.got.status, stranger.got.headers['www-authenticate'], stranger.got.body]).toEqual([401, 'Bearer realm="operations"', { error: 'the operations token is required' }]);
  });

  it('is 403 naming OPS_TOKEN in production without one, and open outside production without one', async () => {
    const closed = answer();
    await guardedMetrics(metrics, opsAccess(true, null))(asking(), closed.res);
    expect([closed.got.status, closed.got.body]).toEqual([403, { error: `metrics are ${METRICS_CLOSED}` }]);
    expect(METRICS_CLOSED).toContain('OPS_TOKEN');
    const open = answer();
    await guardedMetrics(metrics, opsAccess(false, null))(asking(), open.res);
    expect(open.got.body).toEqual({ metrics: true });
  });
});
