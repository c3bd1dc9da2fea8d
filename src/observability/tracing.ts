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

const propagator = new W3CTraceContextPropagator();

export interface Tracing {
  /** Null when traces are off: no span is made, the caller's context is still passed on. */
  readonly tracer: Tracer | null;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export function createTracing(config: ObservabilityConfig['tracing']): Tracing {
  if (!config) return { tracer: null, shutdown: async () => undefined };
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
    shutdown: () => provider.shutdown(),
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
