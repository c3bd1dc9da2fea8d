/**
 * OpenTelemetry traces, when the OTEL_* variables ask for them (config.ts):
 * a tracer provider of this gateway's own, exporting OTLP over HTTP (JSON)
 * in batches. Nothing is registered globally: spans are parented explicitly
 * (the operation's span travels with the operation's upstream scope), so two
 * gateways in one process, one tracing and one not, stay apart.
 *
 * W3C trace context is read from the caller and written upstream whether or
 * not this gateway records spans: with tracing off, the caller's own
 * `traceparent` goes on upstream unchanged, so the router's trace still
 * reaches the payments API.
 */
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
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { ObservabilityConfig } from '../config.js';
import type { Logger } from '../logger.js';

const propagator = new W3CTraceContextPropagator();
/** How long stopping waits for the last export: well inside the shutdown grace period. */
const SHUTDOWN_EXPORT_MS = 5_000;

export interface Tracing {
  /** Null when traces are off: no span is made, the caller's context is still passed on. */
  readonly tracer: Tracer | null;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export function createTracing(config: ObservabilityConfig['tracing'], logger: Logger): Tracing {
  if (!config) return { tracer: null, shutdown: async () => undefined };
  // Failed exports and dropped spans are reported through OpenTelemetry's diag channel, silent by
  // default: an operator must see that traces are not arriving. (diag is process-wide; the last
  // gateway to start with traces on owns it.)
  const warn = (message: string, ...args: unknown[]) => logger.warn({ otel: args.length > 0 ? args.map(String) : undefined }, `OpenTelemetry: ${message}`);
  diag.setLogger({ error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the env detector) win over the default name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  // The exporter and batch processor read OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and OTEL_BSP_* themselves.
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.url }))],
  });
  return {
    tracer: provider.getTracer('payments-graphql-gateway'),
    // Shutdown exports what is buffered; an unreachable collector must neither fail nor stall it.
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

/** The caller's trace context (`traceparent`, `tracestate`), or the root when it sent none or a malformed one. */
export function callerContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/** `traceparent` (and `tracestate`) for a call made within `context`; empty when there is no trace. */
export function traceHeaders(context: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, defaultTextMapSetter);
  return carrier;
}

/** The trace id of `context`, when there is one (the caller's, or this gateway's span). */
export function traceIdOf(context: Context): string | undefined {
  const span = trace.getSpanContext(context);
  return span && trace.isSpanContextValid(span) ? span.traceId : undefined;
}

/** A child span of `parent`, and the context it makes; with no tracer, the parent itself. */
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
