/**
 * One operation as the operator sees it: request id, span, and one line in the operation metrics. The transport
 * starts and ends it; the Apollo plugin below names it.
 */
import { randomUUID } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import type { Logger } from '../logger.js';
import type { GatewayMetrics, OperationOutcome } from './metrics.js';
import { callerContext, endSpan, SpanKind, startSpan, traceIdOf, type Span, type TraceContext, type Tracing } from './tracing.js';

const REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;
const ERROR_CODE = /^[A-Z][A-Z_]{0,49}$/;

export type Headers = Record<string, string | string[] | undefined>;

export interface OperationStart {
  transport: 'http' | 'websocket' | 'sse' | 'callback';
  headers: Headers;
  /** A WebSocket connection carries many operations: ignore the caller's `x-request-id`. */
  freshId?: boolean;
}

export class OperationTelemetry {
  readonly requestId: string;
  readonly traceContext: TraceContext;
  private readonly span: Span | null;
  private readonly started = performance.now();
  private name: string | null = null;
  private callerId: string | undefined;
  private type = 'unknown';
  private outcome: OperationOutcome = 'rejected';
  private codes: string[] = [];
  private ended = false;
  private child: Logger | null = null;

  constructor(
    private readonly metrics: GatewayMetrics | null,
    tracing: Tracing,
    private readonly parentLogger: Logger,
    start: OperationStart,
  ) {
    const parent = callerContext(start.headers);
    const { span, context } = startSpan(tracing.tracer, 'GraphQL operation', SpanKind.SERVER, { 'gateway.transport': start.transport }, parent);
    this.span = span;
    this.traceContext = context;
    this.requestId = pickRequestId(start.freshId ? undefined : start.headers['x-request-id'], traceIdOf(context));
    span?.setAttribute('gateway.request_id', this.requestId);
  }

  /** Built on first use: a pino child serialises its bindings when made, and most operations log nothing. */
  get logger(): Logger {
    return (this.child ??= this.parentLogger.child({ requestId: this.requestId }));
  }

  get debugging(): boolean {
    return this.parentLogger.isLevelEnabled('debug');
  }

  named(name: string | null | undefined, type: string): void {
    this.name = name ?? null;
    this.type = type;
    this.span?.updateName(name ? `${type} ${name}` : type);
    this.span?.setAttributes({ 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) });
  }

  by(callerId: string): void {
    this.callerId = callerId;
  }

  answered(data: unknown, errors: readonly GraphQLFormattedError[] | undefined): void {
    this.codes = codesOf(errors ?? []);
    this.outcome = this.codes.length === 0 ? 'ok' : data === null || data === undefined ? 'error' : 'partial';
  }

  refused(errors: readonly GraphQLFormattedError[]): void {
    this.codes = codesOf(errors);
    this.outcome = 'rejected';
  }

  get isSubscription(): boolean {
    return this.type === 'subscription';
  }

  /** Idempotent: the first call counts. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const seconds = (performance.now() - this.started) / 1000;
    if (this.metrics) {
      const operation = this.type === 'unknown' ? 'unknown' : this.metrics.operationLabel(this.name, this.callerId);
      const labels = { operation, type: this.type, outcome: this.outcome };
      this.metrics.operations.inc(labels);
      if (!this.isSubscription) this.metrics.operationDuration.observe(labels, seconds);
      for (const code of this.codes) this.metrics.operationErrors.inc({ code });
    }
    endSpan(this.span, this.outcome === 'error', this.codes.length > 0 ? { 'graphql.error.codes': [...new Set(this.codes)] } : {});
    if (this.debugging) this.logger.debug({ operation: this.name, type: this.type, outcome: this.outcome, ms: Math.round(seconds * 1000) }, 'operation finished');
  }
}

function codesOf(errors: readonly GraphQLFormattedError[]): string[] {
  return errors.map((e) => {
    const code = e.extensions?.code;
    return typeof code === 'string' && ERROR_CODE.test(code) ? code : 'other';
  });
}

/** The error formatter gets no context; a WeakMap, not an AsyncLocalStorage, whose promise hooks would cost every operation. */
const raisedIn = new WeakMap<object, OperationTelemetry>();

export function attributeErrors(errors: readonly unknown[], operation: OperationTelemetry): void {
  for (const error of errors) if (typeof error === 'object' && error !== null) raisedIn.set(error, operation);
}

export function operationLoggerOf(error: unknown, fallback: Logger): Logger {
  return (typeof error === 'object' && error !== null ? raisedIn.get(error)?.logger : undefined) ?? fallback;
}

function pickRequestId(given: string | string[] | undefined, traceId: string | undefined): string {
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given;
  return traceId ?? randomUUID();
}

export function withRequestId(errors: readonly GraphQLFormattedError[], requestId: string): GraphQLFormattedError[] {
  return errors.map((e) => ({ ...e, extensions: { ...e.extensions, requestId } }));
}

export function operationTelemetryPlugin<T extends { telemetry: OperationTelemetry; metricsOwner?: string | undefined }>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart({ contextValue }) {
      const telemetry = contextValue.telemetry;
      return {
        async didResolveOperation({ operation, operationName }) {
          if (contextValue.metricsOwner) telemetry.by(contextValue.metricsOwner);
          if (operation) telemetry.named(operationName, operation.operation);
        },
        async didEncounterErrors({ errors }) {
          attributeErrors(errors, telemetry);
        },
        async didEncounterSubsequentErrors(_context, errors) {
          attributeErrors(errors, telemetry);
        },
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          telemetry.answered(result.data, result.errors);
          if (result.errors) result.errors = withRequestId(result.errors, telemetry.requestId);
        },
      };
    },
  };
}
