/**
 * Subscriptions over Server-Sent Events (graphql-sse, distinct connections mode) at /graphql, for clients
 * that cannot open a WebSocket; queries and mutations stay on HTTP.
 */
import type http from 'node:http';
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { createHandler, type Response } from 'graphql-sse';
import type { Context, ContextDeps } from '../context.js';
import { ErrorCode } from '../errors.js';
import type { EventBus } from '../realtime/bus.js';
import type { Reconciler } from '../realtime/reconciler.js';
import { UpstreamAuthenticationError, UpstreamPermissionError, UpstreamRouteMissingError } from '../upstream/index.js';
import { REVOKED_KEY_MESSAGE, type Admission, type Caller, type StreamRefusal } from '../access/admission.js';
import { MAX_BODY_BYTES, setCorsHeaders } from './graphql-route.js';
import { clientAddress } from './client-address.js';
import type { OperationTelemetry } from '../observability/index.js';
import { streamContext, streamedResult } from './realtime-session.js';
import { serveSse } from './sse-adapter.js';

export interface SseDeps {
  schema: GraphQLSchema;
  bus: EventBus;
  reconciler: Reconciler;
  context: ContextDeps;
  limits: { queueLimit: number; maxBufferedBytes: number };
  /** graphql-sse runs what onSubscribe returns unvalidated: the door checks it. */
  admission: Admission;
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

export interface SseRoute {
  wants(req: http.IncomingMessage): boolean;
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  stats(): { sseStreams: number };
  /** Ends every open stream (shutdown): a stream never finishes by itself, so draining would wait for nothing. */
  close(): void;
}

type SseContext = Context & Record<PropertyKey, unknown>;

type Answer = Response;

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 429: 'Too Many Requests', 503: 'Service Unavailable' };

const answer = (status: number, message: string, code: string): Answer => [
  JSON.stringify({ errors: [{ message, extensions: { code } }] }),
  { status, statusText: STATUS_TEXT[status] ?? 'Error', headers: { 'content-type': 'application/json; charset=utf-8' } },
];

/** The last words of a stream whose key was revoked: an error event, then the protocol's `complete`. */
function endRevoked(res: http.ServerResponse): void {
  if (res.writableEnded || res.destroyed) return;
  const errors = [{ message: 'The payments API revoked this API key: the stream is closed.', extensions: { code: ErrorCode.UNAUTHENTICATED } }];
  res.end(`event: next\ndata: ${JSON.stringify({ errors })}\n\nevent: complete\ndata:\n\n`);
}

export function createSseRoute(deps: SseDeps): SseRoute {
  const { config, logger } = deps.context;
  const { admission } = deps;
  const open = new Set<http.ServerResponse>();
  const addressOf = clientAddress(config.limits.trustedProxies);
  const telemetryOf = new WeakMap<object, OperationTelemetry>();

  const callerOf = (header: string | null | undefined): Caller | Answer => {
    const caller = admission.caller(header ?? undefined);
    if (caller === null) return answer(401, 'Authentication required: send "Authorization: Bearer <secret API key>".', ErrorCode.UNAUTHENTICATED);
    if (caller instanceof GraphQLError) {
      const forbidden = caller.extensions.code === ErrorCode.FORBIDDEN;
      return answer(forbidden ? 403 : 401, caller.message, String(caller.extensions.code));
    }
    return caller;
  };

  const refusal = (refused: StreamRefusal): Answer => {
    switch (refused.kind) {
      case 'revoked':
        return answer(401, REVOKED_KEY_MESSAGE, ErrorCode.UNAUTHENTICATED);
      case 'cap':
        return answer(429, `At most ${refused.limit} live event streams per API key.`, ErrorCode.RATE_LIMITED);
      case 'rate': {
        const { by, retryAfterSeconds } = refused.refusal;
        const whose = by === 'key' ? 'with this API key' : 'from this address';
        const [body, init] = answer(429, `Too many event streams opened ${whose}; retry later.`, ErrorCode.RATE_LIMITED);
        return [body, { ...init, headers: { ...init.headers, 'retry-after': String(retryAfterSeconds) } }] as Answer;
      }
      case 'document': {
        // Through the one error formatter: no "Did you mean" hints where suggestions are off.
        const first = refused.errors[0]!;
        const formatted = deps.formatError(first.toJSON(), first);
        return answer(400, formatted.message, String(formatted.extensions?.code ?? ErrorCode.BAD_USER_INPUT));
      }
      case 'not-subscription':
        return answer(400, 'Only subscriptions are served as event streams; send queries and mutations as GraphQL over HTTP (application/json).', ErrorCode.BAD_USER_INPUT);
      case 'account': {
        const { error } = refused;
        if (error instanceof UpstreamAuthenticationError) return answer(401, 'The payments API rejected this API key.', ErrorCode.UNAUTHENTICATED);
        if (error instanceof UpstreamPermissionError) return answer(403, 'Forbidden.', ErrorCode.FORBIDDEN);
        // A call beyond the spec the upstream lacks: not "unavailable", as trying again will not help.
        if (error instanceof UpstreamRouteMissingError) return answer(502, 'The payments API does not offer GET /v1/accounts, which event streams need.', ErrorCode.UPSTREAM_UNSUPPORTED);
        logger.warn({ err: error instanceof Error ? { message: error.message } : error }, 'event stream refused: account lookup failed');
        return answer(503, 'Upstream unavailable, try again later.', ErrorCode.UPSTREAM_UNAVAILABLE);
      }
      case 'slot':
      case 'gone':
        // The client left before the stream opened: nothing to stream to.
        return answer(400, 'The stream was closed before it opened.', ErrorCode.BAD_USER_INPUT);
    }
  };

  const handler = createHandler<http.IncomingMessage, { res: http.ServerResponse }, SseContext>({
    schema: deps.schema,
    // Null: no "single connection mode" (its stream tokens would be a second credential); each stream carries the key.
    authenticate: (req) => {
      const caller = callerOf(req.headers.get('authorization'));
      return Array.isArray(caller) ? (caller as Answer) : null;
    },
    onSubscribe: async (req, params) => {
      const caller = callerOf(req.headers.get('authorization'));
      if (Array.isArray(caller)) return caller as Answer;
      const { callerId } = caller as Caller;
      const res = req.context.res;
      // The client leaving, before the stream opens or after, gives its slot back (the signal is the stream's release).
      const gone = new AbortController();
      res.once('close', () => gone.abort());
      // Counted from now on, so a shutdown ends a stream still being opened too.
      open.add(res);
      res.once('close', () => open.delete(res));
      const variables = params.variables ?? {};
      // The sequence every streaming transport shares: revoked, per-key cap, stream rate, document, account, live.
      const opened = await admission.openStream({
        transport: 'sse',
        caller: caller as Caller,
        address: addressOf(req.raw),
        payload: params as unknown as Record<string, unknown>,
        operationName: params.operationName ?? undefined,
        variables,
        subscriptionsOnly: true,
        signal: gone.signal,
        // The key revoked on any instance: the stream ends with the reason as its last event.
        onRevoked: () => endRevoked(res),
      });
      if ('refused' in opened) {
        open.delete(res);
        return refusal(opened.refused);
      }
      const { stream } = opened;
      const { document, accountId } = stream;
      const header = (name: string) => req.headers.get(name) ?? undefined;
      const telemetry = deps.context.observability.startOperation({ transport: 'sse', headers: { 'x-request-id': header('x-request-id'), traceparent: header('traceparent'), tracestate: header('tracestate') } });
      telemetry.by(callerId);
      telemetry.named(params.operationName ?? stream.operation?.name?.value, 'subscription');
      deps.context.observability.subscriptionStarted();
      telemetryOf.set(req, telemetry);
      res.once('close', () => telemetry.end());
      const contextValue = streamContext({
        context: deps.context,
        bus: deps.bus,
        reconciler: deps.reconciler,
        caller: stream.caller,
        accountId,
        telemetry,
        queueLimit: deps.limits.queueLimit,
        isCongested: () => res.writableLength > deps.limits.maxBufferedBytes,
        onOverflow: () => {
          logger.warn({ callerId, queueLimit: deps.limits.queueLimit }, 'event stream subscriber too slow: stream closed');
          res.destroy();
        },
      }) as SseContext;
      return { schema: deps.schema, document, operationName: params.operationName ?? null, variableValues: variables, contextValue };
    },
    onNext: (_ctx, req, result) => {
      const format = (errors: readonly GraphQLError[]) => errors.map((e) => deps.formatError(e.toJSON(), e));
      return streamedResult(result as ExecutionResult, telemetryOf.get(req), format, admission.documents) as ExecutionResult | undefined;
    },
  });

  return {
    wants: (req) => req.headers.accept === 'text/event-stream',
    handle: (req, res) => {
      // Browsers on any origin may open a stream, as they may POST to /graphql (same bearer-key rule).
      setCorsHeaders(res);
      // Without a well-formed key the stream is refused anyway (authenticate, below): only a small body is read.
      const caller = admission.caller(req.headers.authorization);
      const keyed = caller !== null && !(caller instanceof GraphQLError);
      return serveSse(handler, req, res, keyed ? MAX_BODY_BYTES : config.limits.maxAnonymousBodyBytes);
    },
    stats: () => ({ sseStreams: open.size }),
    close() {
      for (const res of open) res.end();
    },
  };
}
