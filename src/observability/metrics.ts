/**
 * Prometheus metrics in a registry per gateway (two in one process do not mix). Labels are fixed vocabularies or
 * route templates; only an operation name comes from a caller, checked and capped (`operationLabel`).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RouteStats } from '../upstream/index.js';

/** Seconds: a cached read (1 ms) to an operation at its deadline (15 s). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
/** A 50-item page batches up to 50 keys; the upstream's largest page is 100. */
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100];
const OPERATION_LABELS = ['operation', 'type', 'outcome'] as const;
const ROUTE_LABELS = ['route', 'method'] as const;
const MAX_OPERATION_NAMES = 200;
/** One key cannot take every slot. */
export const MAX_OPERATION_NAMES_PER_CALLER = 20;
export const OPERATION_NAME_IDLE_MS = 60 * 60 * 1000;
/** The series an evicted name is removed from. */
const OPERATION_TYPES = ['query', 'mutation', 'subscription', 'unknown'] as const;
const OUTCOMES: readonly OperationOutcome[] = ['ok', 'partial', 'error', 'rejected'];
/** Transports that do not say who called share one caller's share. */
const UNATTRIBUTED = '(unattributed)';

export type OperationOutcome = 'ok' | 'partial' | 'error' | 'rejected';

/** What the Redis event log's reader processed (src/realtime/log-reader.ts, EventLogStats). */
export interface EventLogStats {
  read: Record<number, number>;
  via: { pushed: number; fetched: number };
  delivered: Record<string, number>;
  skipped: Record<string, number>;
  partitions: number;
}

export interface LiveSources {
  routes(): Record<string, RouteStats>;
  websocket(): { connections: number; subscriptions: number };
  caches?(): Record<string, number>;
  redis?(): Partial<Record<string, boolean>>;
  idempotency?(): { quarantinedUntil: number | null; losses: number } | undefined;
  /** The Redis event log's reader; absent without Redis. */
  eventLog?(): EventLogStats | undefined;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly names = new Map<string, { owner: string; lastSeen: number }>();
  private readonly owned = new Map<string, number>();
  private readonly now: () => number;
  private sources: LiveSources | null = null;

  readonly operations = this.counter(
    'gateway_operations_total',
    'GraphQL operations by name, type and outcome (ok, partial: data with errors, error, rejected: refused before execution).',
    OPERATION_LABELS,
  );
  readonly operationDuration = this.histogram(
    'gateway_operation_duration_seconds',
    'Time from receipt to answer of a GraphQL query or mutation (subscriptions are counted, not timed).',
    OPERATION_LABELS,
    LATENCY_BUCKETS,
  );
  readonly operationErrors = this.counter('gateway_operation_errors_total', 'Errors in GraphQL answers by extensions.code.', ['code']);
  readonly upstreamRequests = this.counter(
    'gateway_upstream_requests_total',
    'Upstream HTTP attempts by route template, method, status class (2xx... or timeout, connection, aborted, other) and attempt number.',
    ['route', 'method', 'status_class', 'attempt'],
  );
  readonly upstreamDuration = this.histogram(
    'gateway_upstream_request_duration_seconds',
    'Upstream HTTP attempt latency by route template, method and status class (bulkhead wait excluded).',
    ['route', 'method', 'status_class'],
    LATENCY_BUCKETS,
  );
  readonly upstreamRetries = this.counter('gateway_upstream_retries_total', 'Upstream attempts sent again after a transient failure.', ROUTE_LABELS);
  readonly retryBudgetExhausted = this.counter('gateway_upstream_retry_budget_exhausted_total', 'Retries refused because the key spent its retry budget on the route.', ROUTE_LABELS);
  readonly loaderBatch = this.histogram('gateway_dataloader_batch_size', 'Keys per DataLoader batch.', ['loader'], BATCH_BUCKETS);
  readonly loaderHits = this.counter('gateway_dataloader_cache_hits_total', 'DataLoader loads answered from the operation cache (no upstream read).', ['loader']);
  readonly idempotency = this.counter(
    'gateway_idempotency_requests_total',
    'Keyed mutations by outcome: executed, replayed, conflict (key reused with other input), in_progress, unavailable.',
    ['outcome'],
  );
  readonly webhooks = this.counter(
    'gateway_webhooks_received_total',
    'Webhook deliveries by result: accepted, out_of_order, duplicate, bad_signature, stale, invalid, unavailable, too_large.',
    ['result'],
  );
  readonly routerInvalidations = this.counter(
    'gateway_router_invalidations_total',
    'Invalidations pushed to the router\'s response cache, by outcome: sent, retried (an attempt failed and another follows), failed (given up), dropped (too many pending).',
    ['outcome'],
  );
  readonly rateLimited = this.counter(
    'gateway_rate_limited_total',
    'Refusals by the gateway\'s own rate limits: operations (per key), ws_connect (per address), ws_subscribe (per key).',
    ['limit'],
  );
  readonly subscriptionsStarted = this.counter('gateway_subscriptions_started_total', 'GraphQL subscriptions started over WebSocket.');

  constructor(options: { defaultMetrics: boolean; now?: () => number }) {
    this.storeGauge('gateway_idempotency_quarantined', 'Whether new keyed mutations are refused (1) because the idempotency Redis lost records, for IDEMPOTENCY_QUARANTINE_MS; absent for stores that cannot lose them.', (c) => (c.quarantinedUntil === null ? 0 : 1));
    this.storeGauge('gateway_idempotency_records_lost', 'Times this instance found the idempotency Redis had lost records (emptied, an older snapshot, a replica behind) since it started.', (c) => c.losses);
    this.now = options.now ?? Date.now;
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    const routes = () => this.routeStats();
    new Gauge({
      name: 'gateway_upstream_breaker_state',
      help: 'Circuit breaker per upstream route: 1 on the current state (closed, open, half_open), 0 on the others.',
      labelNames: [...ROUTE_LABELS, 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [route, stats] of routes()) {
          const labels = routeLabels(route);
          for (const state of ['closed', 'open', 'half_open'] as const) this.set({ ...labels, state }, stats.state === state ? 1 : 0);
        }
      },
    });
    this.routeGauge('gateway_upstream_bulkhead_queued', 'Upstream calls waiting for a slot of their route (bulkhead queue depth).', (s) => s.queued);
    this.routeGauge('gateway_upstream_in_flight', 'Upstream calls holding a slot of their route.', (s) => s.inFlight);
    this.liveGauge('gateway_websocket_connections', 'Open GraphQL-over-WebSocket connections.', (ws) => ws.connections);
    this.liveGauge('gateway_subscriptions_active', 'Live subscriptions on this instance.', (ws) => ws.subscriptions);
    this.mapGauge('gateway_graphql_cache_bytes', 'Estimated bytes held by each cache of what callers send: parsed documents, persisted query texts, compiled queries, operation prices.', 'cache', (live) => live.caches?.() ?? {});
    this.mapGauge(
      'gateway_redis_up',
      'Redis connection per role (limits, key-news, entity-cache, idempotency, bus-publisher, bus-subscriber): 1 when ready, 0 while down. None without REDIS_URL.',
      'role',
      (live) => Object.fromEntries(Object.entries(live.redis?.() ?? {}).map(([role, up]) => [role, up ? 1 : 0])),
    );
    this.eventLogCounter('gateway_event_log_events_read_total', 'Entries of the Redis event log this instance\'s reader took, by partition: only the partitions its subscribers\' accounts and watched objects fall in are read.', 'partition', (s) => s.read);
    this.eventLogCounter('gateway_event_log_events_fetched_total', 'Entries read from the stream rather than taken from their append\'s message (a message missed, a partition\'s first read, the safety re-read).', null, (s) => ({ '': s.via.fetched }));
    this.eventLogCounter('gateway_event_log_events_delivered_total', 'Events handed to at least one listener on this instance, by source: read (from the log) or own (this instance\'s append, at once).', 'source', (s) => s.delivered);
    this.eventLogCounter('gateway_event_log_events_skipped_total', 'Entries read and not handed on, by reason: own (delivered at its append already) or no_listener (an account of a read partition nobody here listens to).', 'reason', (s) => s.skipped);
    const sources = () => this.sources;
    new Gauge({
      name: 'gateway_event_log_partitions_read',
      help: 'Partitions of the Redis event log this instance reads now (of 16).',
      registers: [this.registry],
      collect() {
        this.reset();
        const stats = sources()?.eventLog?.();
        if (stats) this.set(stats.partitions);
      },
    });
  }

  /** A counter kept by the event log's reader, copied at scrape time; no series without Redis. */
  private eventLogCounter(name: string, help: string, label: string | null, read: (stats: EventLogStats) => Record<string, number>): void {
    const sources = () => this.sources;
    new Counter({
      name,
      help,
      labelNames: label ? [label] : [],
      registers: [this.registry],
      collect() {
        this.reset();
        const stats = sources()?.eventLog?.();
        if (!stats) return;
        for (const [value, n] of Object.entries(read(stats))) this.inc(label ? { [label]: value } : {}, n);
      },
    });
  }

  // A metric's name, help and label names are its public contract: spelled out where each is declared above.

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  private routeGauge(name: string, help: string, read: (stats: RouteStats) => number): void {
    const routes = () => this.routeStats();
    new Gauge({
      name,
      help,
      labelNames: ROUTE_LABELS,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [route, stats] of routes()) this.set(routeLabels(route), read(stats));
      },
    });
  }

  private routeStats(): [string, RouteStats][] {
    return Object.entries(this.sources?.routes() ?? {});
  }

  /** One series per entry of what `read` returns, labelled by its key; none before `readFrom`. */
  private mapGauge(name: string, help: string, label: string, read: (live: LiveSources) => Record<string, number>): void {
    const sources = () => this.sources;
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [this.registry],
      collect() {
        this.reset();
        const live = sources();
        for (const [value, n] of Object.entries(live ? read(live) : {})) this.set({ [label]: value }, n);
      },
    });
  }

  /** A gauge of the idempotency store's condition, when its store has one. */
  private storeGauge(name: string, help: string, read: (condition: { quarantinedUntil: number | null; losses: number }) => number): void {
    const sources = () => this.sources;
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        const condition = sources()?.idempotency?.();
        if (condition) this.set(read(condition));
      },
    });
  }

  private liveGauge(name: string, help: string, read: (ws: ReturnType<LiveSources['websocket']>) => number): void {
    const sources = () => this.sources;
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        const ws = sources()?.websocket();
        this.set(ws ? read(ws) : 0);
      },
    });
  }

  readFrom(sources: LiveSources): void {
    this.sources = sources;
  }

  /** A name with a long run of digits is `other` too: it was likely built from an id (docs/operations.md, Metrics: what to scrape). */
  operationLabel(name: string | null | undefined, callerId: string = UNATTRIBUTED): string {
    if (!name) return 'anonymous';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(name) || /\d{4,}/.test(name)) return 'other';
    const now = this.now();
    const kept = this.names.get(name);
    if (kept) {
      kept.lastSeen = now;
      return name;
    }
    if ((this.owned.get(callerId) ?? 0) >= MAX_OPERATION_NAMES_PER_CALLER && !this.evictIdle(now, callerId)) return 'other';
    if (this.names.size >= MAX_OPERATION_NAMES && !this.evictIdle(now)) return 'other';
    this.names.set(name, { owner: callerId, lastSeen: now });
    this.owned.set(callerId, (this.owned.get(callerId) ?? 0) + 1);
    return name;
  }

  private evictIdle(now: number, owner?: string): boolean {
    let oldest: [string, { owner: string; lastSeen: number }] | null = null;
    for (const entry of this.names) {
      if (owner !== undefined && entry[1].owner !== owner) continue;
      if (now - entry[1].lastSeen >= OPERATION_NAME_IDLE_MS && (!oldest || entry[1].lastSeen < oldest[1].lastSeen)) oldest = entry;
    }
    if (!oldest) return false;
    const [name, { owner: holder }] = oldest;
    this.names.delete(name);
    const left = (this.owned.get(holder) ?? 1) - 1;
    if (left > 0) this.owned.set(holder, left);
    else this.owned.delete(holder);
    for (const type of OPERATION_TYPES) {
      for (const outcome of OUTCOMES) {
        const labels = { operation: name, type, outcome };
        this.operations.remove(labels);
        this.operationDuration.remove(labels);
      }
    }
    return true;
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}

export function routeLabels(route: string): { route: string; method: string } {
  const space = route.indexOf(' ');
  return space < 0 ? { route, method: 'unknown' } : { route: route.slice(space + 1), method: route.slice(0, space) };
}

export function statusClass(result: { status: number } | { failure: string }): string {
  return 'status' in result ? `${Math.floor(result.status / 100)}xx` : result.failure;
}
