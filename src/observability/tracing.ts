/**
 * OpenTelemetry traces, OTLP/HTTP in batches, from a provider of this gateway's own: nothing global, so two gateways
 * in one process stay apart. The caller's `traceparent` goes upstream even with tracing off.
 */
import { createRequire } from 'node:module';
import {
  diag,
  DiagLogLevel,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type * as Exporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as TraceSdk from '@opentelemetry/sdk-trace-base';
import type * as Conventions from '@opentelemetry/semantic-conventions';
import type { ObservabilityConfig } from '../config.js';
import type { Logger } from '../logger.js';

const propagator = new W3CTraceContextPropagator();
/** Well inside the shutdown grace period. */
const SHUTDOWN_EXPORT_MS = 5_000;

export interface Tracing {
  /** Null when traces are off; the caller's context is still passed on. */
  readonly tracer: Tracer | null;
  shutdown(): Promise<void>;
}

/**
 * The SDK and its OTLP exporter, loaded only when traces are on: an idle gateway without a collector does not hold
 * their modules (about 1.5 MB of heap). Required, not imported, so createTracing stays synchronous; the SDK is
 * CommonJS, so `import` loads the same files.
 */
function traceSdk() {
  const require = createRequire(import.meta.url);
  return {
    ...(require('@opentelemetry/exporter-trace-otlp-http') as typeof Exporter),
    ...(require('@opentelemetry/resources') as typeof Resources),
    ...(require('@opentelemetry/sdk-trace-base') as typeof TraceSdk),
    ATTR_SERVICE_NAME: (require('@opentelemetry/semantic-conventions') as typeof Conventions).ATTR_SERVICE_NAME,
  };
}

export function createTracing(config: ObservabilityConfig['tracing'], logger: Logger): Tracing {
  if (!config) return { tracer: null, shutdown: async () => undefined };
  const { ATTR_SERVICE_NAME, BasicTracerProvider, BatchSpanProcessor, OTLPTraceExporter, defaultResource, detectResources, envDetector, resourceFromAttributes } = traceSdk();
  // diag is silent by default, yet an operator must see that traces are not arriving (process-wide: the last gateway owns it).
  const warn = (message: string, ...args: unknown[]) => logger.warn({ otel: args.length > 0 ? args.map(String) : undefined }, `OpenTelemetry: ${message}`);
  diag.setLogger({ error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.url }))],
  });
  return {
    tracer: provider.getTracer('payments-graphql-gateway'),
    // An unreachable collector must neither fail nor stall shutdown.
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), SHUTDOWN_EXPORT_MS)));
      try {
        const outcome = await Promise.race([provider.shutdown(), late]);
        if (outcome === 'late') logger.warn({ waitedMs: SHUTDOWN_EXPORT_MS }, 'OpenTelemetry: spans not exported at shutdown: the collector did not answer in time');
      } catch (error) {
        logger.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'OpenTelemetry: spans not exported at shutdown');
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export function callerContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

export function traceHeaders(context: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, defaultTextMapSetter);
  return carrier;
}

export function traceIdOf(context: Context): string | undefined {
  const span = trace.getSpanContext(context);
  return span && trace.isSpanContextValid(span) ? span.traceId : undefined;
}

export function startSpan(tracer: Tracer | null, name: string, kind: SpanKind, attributes: Attributes, parent: Context): { span: Span | null; context: Context } {
  if (!tracer) return { span: null, context: parent };
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

export function endSpan(span: Span | null, failed: boolean, attributes: Attributes = {}): void {
  if (!span) return;
  span.setAttributes(attributes);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

export { SpanKind };
export type { Context as TraceContext, Span };
