/**
 * One GraphQL operation as the operator sees it: its request id (in every
 * log line through its child logger, sent upstream, returned in errors), its
 * span (the parent of its upstream calls), and its line in the operation
 * metrics, written once when it ends. The transport that received the
 * operation starts it and ends it; the Apollo plugin below names it and
 * tells how it went.
 */
import { randomUUID } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import type { Logger } from '../logger.js';
import type { GatewayMetrics, OperationOutcome } from './metrics.js';
import { callerContext, endSpan, SpanKind, startSpan, traceIdOf, type Span, type TraceContext, type Tracing } from './tracing.js';

/** What a caller may send as `x-request-id`: short, and safe in a log line and a header. */
const REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;
const ERROR_CODE = /^[A-Z][A-Z_]{0,49}$/;

export type Headers = Record<string, string | string[] | undefined>;

export interface OperationStart {
  transport: 'http' | 'websocket' | 'sse' | 'callback';
  /** The caller's headers (HTTP request, or the WebSocket upgrade request). */
  headers: Headers;
  /** Ignore the caller's `x-request-id` (a WebSocket connection carries many operations). */
  freshId?: boolean;
}

export class OperationTelemetry {
  readonly requestId: string;
  /** The operation's span in its trace: upstream calls are its children. */
  readonly traceContext: TraceContext;
  private readonly span: Span | null;
  private readonly started = performance.now();
  private name: string | null = null;
  /** Who sent it, when the transport tells (HTTP): the metric labels' per-caller share is counted against it. */
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

  /**
   * The operation's logger: every line carries its request id. Built on first use: a pino
   * child serialises its bindings when made, and most operations log nothing.
   */
  get logger(): Logger {
    return (this.child ??= this.parentLogger.child({ requestId: this.requestId }));
  }

  /** Whether debug lines are written: the ones written for every operation and upstream call are built only then. */
  get debugging(): boolean {
    return this.parentLogger.isLevelEnabled('debug');
  }

  /** Known once the document is parsed and its operation chosen. */
  named(name: string | null | undefined, type: string): void {
    this.name = name ?? null;
    this.type = type;
    this.span?.updateName(name ? `${type} ${name}` : type);
    this.span?.setAttributes({ 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) });
  }

  /** The caller's id (a hash of its key), for the per-caller share of operation-name labels. */
  by(callerId: string): void {
    this.callerId = callerId;
  }

  /** How the answer went; the error codes are counted when the operation ends. */
  answered(data: unknown, errors: readonly GraphQLFormattedError[] | undefined): void {
    this.codes = codesOf(errors ?? []);
    this.outcome = this.codes.length === 0 ? 'ok' : data === null || data === undefined ? 'error' : 'partial';
  }

  /** Refused before it was parsed (a bad key, a body that is not JSON, a rate limit): `rejected`, its codes counted all the same. */
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
      // Never parsed (refused before, or unparseable): no name to tell, rather than `anonymous`.
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

/** Error codes as metric labels: a code that does not look like one is `other`. */
function codesOf(errors: readonly GraphQLFormattedError[]): string[] {
  return errors.map((e) => {
    const code = e.extensions?.code;
    return typeof code === 'string' && ERROR_CODE.test(code) ? code : 'other';
  });
}

/**
 * Each error raised while serving an operation, to that operation. The error
 * formatter is handed an error and no context, and still logs with the
 * operation's request id. An AsyncLocalStorage would do it too, but on Node 20
 * it turns on promise hooks for every promise of every operation (about a
 * tenth of a 50-item page's CPU), to serve the rare error.
 */
const raisedIn = new WeakMap<object, OperationTelemetry>();

/** Tells the error formatter which operation these errors came from, before it formats them. */
export function attributeErrors(errors: readonly unknown[], operation: OperationTelemetry): void {
  for (const error of errors) if (typeof error === 'object' && error !== null) raisedIn.set(error, operation);
}

/** The logger of the operation `error` was raised in (attributeErrors), or `fallback` when none is known. */
export function operationLoggerOf(error: unknown, fallback: Logger): Logger {
  return (typeof error === 'object' && error !== null ? raisedIn.get(error)?.logger : undefined) ?? fallback;
}

/** The caller's id when it is a sane one, else the trace id (so logs and traces join), else a new one. */
function pickRequestId(given: string | string[] | undefined, traceId: string | undefined): string {
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given;
  return traceId ?? randomUUID();
}

/** Errors carry the request id in `extensions`, so support can find the operation's logs. */
export function withRequestId(errors: readonly GraphQLFormattedError[], requestId: string): GraphQLFormattedError[] {
  return errors.map((e) => ({ ...e, extensions: { ...e.extensions, requestId } }));
}

/** Names each HTTP operation and tells how it went; the route ends it once the answer is written. */
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
