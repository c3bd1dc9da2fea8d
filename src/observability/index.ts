/** Metrics, traces and request ids (docs/operations.md), filling the hooks other rooms expose, which stay unaware of it. */
import type http from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { ObservabilityConfig } from '../config.js';
import type { IdempotencyOutcome } from '../idempotency/index.js';
import type { LoaderHooks } from '../loaders/index.js';
import type { Logger } from '../logger.js';
import type { AttemptResult, AttemptStart, AttemptWatch, UpstreamObserver } from '../upstream/index.js';
import { GatewayMetrics, routeLabels, statusClass, type LiveSources } from './metrics.js';
import { OperationTelemetry, type OperationStart } from './operation.js';
import { batchScope, scopedCallContext, traceResolvers } from './spans.js';
import { createTracing, endSpan, SpanKind, startSpan, traceHeaders, type Tracing } from './tracing.js';
import { ROOT_CONTEXT } from '@opentelemetry/api';

const UNREACHABLE_LOG_INTERVAL_MS = 10_000;

export { attributeErrors, OperationTelemetry, operationLoggerOf, operationTelemetryPlugin, withRequestId } from './operation.js';
export type { OperationStart } from './operation.js';
export type { LiveSources } from './metrics.js';

export class Observability {
  /** Null when METRICS_ENABLED=false. */
  readonly metrics: GatewayMetrics | null;
  private readonly tracing: Tracing;
  private readonly loaders: LoaderHooks | undefined;

  constructor(
    config: ObservabilityConfig,
    private readonly logger: Logger,
  ) {
    this.metrics = config.metrics.enabled ? new GatewayMetrics({ defaultMetrics: true }) : null;
    this.tracing = createTracing(config.tracing, logger);
    this.loaders = loaderStats(this.metrics);
  }

  loadersFor(operation: OperationTelemetry): LoaderHooks | undefined {
    const tracer = this.tracing.tracer;
    if (!tracer) return this.loaders;
    return {
      batch: (loader, size) => this.loaders?.batch(loader, size),
      hit: (loader) => this.loaders?.hit(loader),
      around: (loader, size, run) => batchScope(tracer, operation, loader, size, run),
    };
  }

  traceResolvers(schema: GraphQLSchema): void {
    if (this.tracing.tracer) traceResolvers(schema, this.tracing.tracer);
  }

  startOperation(start: OperationStart): OperationTelemetry {
    return new OperationTelemetry(this.metrics, this.tracing, this.logger, start);
  }

  readonly upstream: UpstreamObserver = {
    attempt: (start) => this.attempt(start),
    retry: (route) => this.metrics?.upstreamRetries.inc(routeLabels(route)),
    retryBudgetExhausted: (route) => this.metrics?.retryBudgetExhausted.inc(routeLabels(route)),
  };


  idempotency(outcome: IdempotencyOutcome): void {
    this.metrics?.idempotency.inc({ outcome });
  }

  webhook(result: string): void {
    this.metrics?.webhooks.inc({ result });
  }

  routerInvalidation(outcome: string): void {
    this.metrics?.routerInvalidations.inc({ outcome });
  }

  /** `limit`: the rate's name in the door's table (access/rate-limit.ts, `RateLimitName`). */
  rateLimited(limit: string): void {
    this.metrics?.rateLimited.inc({ limit });
  }

  subscriptionStarted(): void {
    this.metrics?.subscriptionsStarted.inc();
  }

  readFrom(sources: LiveSources): void {
    this.metrics?.readFrom(sources);
  }

  metricsRoute() {
    return async (_req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
      if (!this.metrics) {
        res.writeHead(404).end();
        return;
      }
      const text = await this.metrics.text();
      res.writeHead(200, { 'content-type': this.metrics.registry.contentType, 'cache-control': 'no-store' });
      res.end(text);
    };
  }

  close(): Promise<void> {
    return this.tracing.shutdown();
  }

  /** One "unreachable" line per route per interval, however many calls fail. */
  private readonly unreachableLogged = new Map<string, number>();

  private unreachable(route: string, result: AttemptResult): void {
    const now = Date.now();
    if (now - (this.unreachableLogged.get(route) ?? -Infinity) < UNREACHABLE_LOG_INTERVAL_MS) return;
    // Routes are the API's fixed templates: a few dozen entries at most.
    this.unreachableLogged.set(route, now);
    const reason = 'reason' in result ? result.reason : 'timed_out';
    this.logger.warn({ route, reason }, 'payments API unreachable');
  }

  private attempt({ method, pattern, attempt, operation: observed }: AttemptStart): AttemptWatch {
    const operation = observed instanceof OperationTelemetry ? observed : null;
    const parent = scopedCallContext(operation) ?? operation?.traceContext ?? ROOT_CONTEXT;
    const attributes = { 'http.request.method': method, 'url.template': pattern, ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}) };
    const { span, context } = startSpan(this.tracing.tracer, `${method} ${pattern}`, SpanKind.CLIENT, attributes, parent);
    const started = performance.now();
    return {
      headers: traceHeaders(context),
      end: (result) => {
        const seconds = (performance.now() - started) / 1000;
        const statusLabel = statusClass(result);
        this.metrics?.upstreamRequests.inc({ route: pattern, method, status_class: statusLabel, attempt: String(attempt) });
        this.metrics?.upstreamDuration.observe({ route: pattern, method, status_class: statusLabel }, seconds);
        const failed = 'failure' in result || result.status >= 500;
        endSpan(span, failed, 'status' in result ? { 'http.response.status_code': result.status } : { 'error.type': result.failure });
        if (operation?.debugging) operation.logger.debug({ upstream: `${method} ${pattern}`, attempt, status: statusLabel, ms: Math.round(seconds * 1000) }, 'upstream call');
        if ('failure' in result && (result.failure === 'connection' || result.failure === 'timeout')) this.unreachable(`${method} ${pattern}`, result);
      },
    };
  }
}

function loaderStats(metrics: GatewayMetrics | null): LoaderHooks | undefined {
  if (!metrics) return undefined;
  return {
    batch: (loader, size) => metrics.loaderBatch.observe({ loader }, size),
    hit: (loader) => metrics.loaderHits.inc({ loader }),
  };
}
