import { describe, expect, it } from 'vitest';
import { GatewayMetrics, MAX_OPERATION_NAMES_PER_CALLER, OPERATION_NAME_IDLE_MS, routeLabels, statusClass } from '../../../src/observability/metrics.js';

describe('metric labels', () => {
  it('keeps operation names while few, and counts the rest as other', () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    expect(metrics.operationLabel(undefined)).toBe('anonymous');
    expect(metrics.operationLabel('PayoutPage')).toBe('PayoutPage');
    // From 25 callers, ten names each: the cap in all, not the share of one caller.
    const labels = Array.from({ length: 250 }, (_, i) => metrics.operationLabel(`Op${String.fromCharCode(97 + (i % 26))}${'x'.repeat(Math.floor(i / 26))}`, `caller${i % 25}`));
    expect(new Set(labels).size).toBe(200);
    expect(labels.slice(199).every((l) => l === 'other')).toBe(true);
    // Names seen before the cap keep their label afterwards.
    expect(metrics.operationLabel('PayoutPage')).toBe('PayoutPage');
  });

  it('lets one caller add only its share of names, so another caller\'s new name still gets a label', () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    const flood = Array.from({ length: 300 }, (_, i) => metrics.operationLabel(`Flood${String.fromCharCode(97 + (i % 26))}${'x'.repeat(Math.floor(i / 26))}`, 'flooder'));
    expect(new Set(flood.filter((l) => l !== 'other')).size).toBe(MAX_OPERATION_NAMES_PER_CALLER);
    expect(flood.slice(MAX_OPERATION_NAMES_PER_CALLER).every((l) => l === 'other')).toBe(true);
    expect(metrics.operationLabel('HonestPage', 'honest')).toBe('HonestPage');
    // A name one caller added is another caller's label too, at no cost to either share.
    expect(metrics.operationLabel('Flooda', 'honest')).toBe('Flooda');
  });

  it('gives an idle name\'s slot back, with its series, when a new name needs it', async () => {
    let now = 0;
    const metrics = new GatewayMetrics({ defaultMetrics: false, now: () => now });
    const names = Array.from({ length: MAX_OPERATION_NAMES_PER_CALLER }, (_, i) => `Old${String.fromCharCode(97 + i)}`);
    for (const name of names) metrics.operations.inc({ operation: metrics.operationLabel(name, 'k'), type: 'query', outcome: 'ok' });
    expect(metrics.operationLabel('Fresh', 'k')).toBe('other');
    now = OPERATION_NAME_IDLE_MS - 1;
    expect(metrics.operationLabel('Olda', 'k')).toBe('Olda');
    now = OPERATION_NAME_IDLE_MS;
    // Oldb is the longest unused (Olda was just counted): it goes, Fresh takes its place.
    expect(metrics.operationLabel('Fresh', 'k')).toBe('Fresh');
    const text = await metrics.text();
    expect(text).not.toContain('operation="Oldb"');
    expect(text).toContain('operation="Olda"');
    expect(metrics.operationLabel('Olda', 'k')).toBe('Olda');
  });

  it('never labels with a name that looks built from an id', () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    expect(metrics.operationLabel('Customer48213')).toBe('other');
    expect(metrics.operationLabel('Report2024')).toBe('other');
    expect(metrics.operationLabel('V2Page')).toBe('V2Page');
  });

  it('splits a route into its template and method, and names a status by its class', () => {
    expect(routeLabels('GET /v1/customers/:id')).toEqual({ route: '/v1/customers/:id', method: 'GET' });
    expect(statusClass({ status: 503 })).toBe('5xx');
    expect(statusClass({ failure: 'timeout' })).toBe('timeout');
  });

  it('reads the live gauges from the wired gateway at scrape time, per route and for the WebSocket side', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    const idle = await metrics.text();
    expect(idle).toContain('gateway_websocket_connections 0');
    expect(idle).not.toContain('gateway_upstream_in_flight{');

    metrics.readFrom({
      routes: () => ({ 'GET /v1/customers/:id': { state: 'half_open', inFlight: 3, queued: 2 } }),
      websocket: () => ({ connections: 4, subscriptions: 5 }),
    });
    const text = await metrics.text();

    expect(text).toContain('gateway_upstream_bulkhead_queued{route="/v1/customers/:id",method="GET"} 2');
    expect(text).toContain('gateway_upstream_in_flight{route="/v1/customers/:id",method="GET"} 3');
    expect(text).toContain('gateway_upstream_breaker_state{route="/v1/customers/:id",method="GET",state="half_open"} 1');
    expect(text).toContain('gateway_upstream_breaker_state{route="/v1/customers/:id",method="GET",state="open"} 0');
    expect(text).toContain('gateway_websocket_connections 4');
    expect(text).toContain('gateway_subscriptions_active 5');
  });
});
