/**
 * The gateway's Prometheus metrics (prom-client), in a registry of its own
 * per gateway (two gateways in one process, as in tests and benches, do not
 * mix). Every label value comes from a short, fixed vocabulary or from the
 * upstream's route templates; nothing a caller sends becomes a label except
 * an operation name, which is checked and capped (`operationLabel`). API
 * keys, ids and e-mail addresses never do.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RouteStats } from '../upstream/observer.js';

/** Seconds; from a cached read (1 ms) to an operation at its deadline (15 s). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
/** A 50-item page batches up to 50 keys; the upstream's largest page is 100. */
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100];
/** Distinct operation names kept as labels; the rest are counted as `other`. */
const MAX_OPERATION_NAMES = 200;

export type OperationOutcome = 'ok' | 'partial' | 'error' | 'rejected';

/** What the scrape reads from the live gateway, rather than counting as it goes. */
export interface LiveSources {
  routes(): Record<string, RouteStats>;
  websocket(): { connections: number; subscriptions: number };
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly names = new Set<string>();
  private sources: LiveSources | null = null;

  readonly operations = new Counter({
    name: 'gateway_operations_total',
    help: 'GraphQL operations by name, type and outcome (ok, partial: data with errors, error, rejected: refused before execution).',
    labelNames: ['operation', 'type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly operationDuration = new Histogram({
    name: 'gateway_operation_duration_seconds',
    help: 'Time from receipt to answer of a GraphQL query or mutation (subscriptions are counted, not timed).',
    labelNames: ['operation', 'type', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly operationErrors = new Counter({
    name: 'gateway_operation_errors_total',
    help: 'Errors in GraphQL answers by extensions.code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly upstreamRequests = new Counter({
    name: 'gateway_upstream_requests_total',
    help: 'Upstream HTTP attempts by route template, method, status class (2xx... or timeout, connection, aborted, other) and attempt number.',
    labelNames: ['route', 'method', 'status_class', 'attempt'] as const,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Upstream HTTP attempt latency by route template, method and status class (bulkhead wait excluded).',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamRetries = new Counter({
    name: 'gateway_upstream_retries_total',
    help: 'Upstream attempts sent again after a transient failure.',
    labelNames: ['route', 'method'] as const,
    registers: [this.registry],
  });
  readonly retryBudgetExhausted = new Counter({
    name: 'gateway_upstream_retry_budget_exhausted_total',
    help: 'Retries refused because the route spent its retry budget.',
    labelNames: ['route', 'method'] as const,
    registers: [this.registry],
  });
  readonly loaderBatch = new Histogram({
    name: 'gateway_dataloader_batch_size',
    help: 'Keys per DataLoader batch.',
    labelNames: ['loader'] as const,
    buckets: BATCH_BUCKETS,
    registers: [this.registry],
  });
  readonly loaderHits = new Counter({
    name: 'gateway_dataloader_cache_hits_total',
    help: 'DataLoader loads answered from the operation cache (no upstream read).',
    labelNames: ['loader'] as const,
    registers: [this.registry],
  });
  readonly idempotency = new Counter({
    name: 'gateway_idempotency_requests_total',
    help: 'Keyed mutations by outcome: executed, replayed, conflict (key reused with other input), in_progress, unavailable.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhooks = new Counter({
    name: 'gateway_webhooks_received_total',
    help: 'Webhook deliveries by result: accepted, out_of_order, duplicate, bad_signature, stale, invalid, unavailable.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'gateway_rate_limited_total',
    help: 'Refusals by the gateway\'s own rate limits: operations (per key), ws_connect (per address), ws_subscribe (per key).',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly subscriptionsStarted = new Counter({
    name: 'gateway_subscriptions_started_total',
    help: 'GraphQL subscriptions started over WebSocket.',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics: boolean }) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    const sources = () => this.sources;
    new Gauge({
      name: 'gateway_upstream_breaker_state',
      help: 'Circuit breaker per upstream route: 1 on the current state (closed, open, half_open), 0 on the others.',
      labelNames: ['route', 'method', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [route, stats] of Object.entries(sources()?.routes() ?? {})) {
          const labels = routeLabels(route);
          for (const state of ['closed', 'open', 'half_open'] as const) this.set({ ...labels, state }, stats.state === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'gateway_upstream_bulkhead_queued',
      help: 'Upstream calls waiting for a slot of their route (bulkhead queue depth).',
      labelNames: ['route', 'method'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [route, stats] of Object.entries(sources()?.routes() ?? {})) this.set(routeLabels(route), stats.queued);
      },
    });
    new Gauge({
      name: 'gateway_upstream_in_flight',
      help: 'Upstream calls holding a slot of their route.',
      labelNames: ['route', 'method'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [route, stats] of Object.entries(sources()?.routes() ?? {})) this.set(routeLabels(route), stats.inFlight);
      },
    });
    new Gauge({
      name: 'gateway_websocket_connections',
      help: 'Open GraphQL-over-WebSocket connections.',
      registers: [this.registry],
      collect() {
        this.set(sources()?.websocket().connections ?? 0);
      },
    });
    new Gauge({
      name: 'gateway_subscriptions_active',
      help: 'Live subscriptions on this instance.',
      registers: [this.registry],
      collect() {
        this.set(sources()?.websocket().subscriptions ?? 0);
      },
    });
  }

  /** The gateway's parts that are read at scrape time, once they exist. */
  readFrom(sources: LiveSources): void {
    this.sources = sources;
  }

  /**
   * A GraphQL operation name as a label: the name itself while fewer than
   * MAX_OPERATION_NAMES distinct ones were seen, else `other`. A name with a
   * long run of digits is `other` too: it was likely built from an id.
   */
  operationLabel(name: string | null | undefined): string {
    if (!name) return 'anonymous';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(name) || /\d{4,}/.test(name)) return 'other';
    if (this.names.has(name)) return name;
    if (this.names.size >= MAX_OPERATION_NAMES) return 'other';
    this.names.add(name);
    return name;
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** `GET /v1/customers/:id` -> route `/v1/customers/:id`, method `GET`. */
export function routeLabels(route: string): { route: string; method: string } {
  const space = route.indexOf(' ');
  return space < 0 ? { route, method: 'unknown' } : { route: route.slice(space + 1), method: route.slice(0, space) };
}

/** `2xx`..`5xx` for an answer; the failure's name when there was none. */
export function statusClass(result: { status: number } | { failure: string }): string {
  return 'status' in result ? `${Math.floor(result.status / 100)}xx` : result.failure;
}
