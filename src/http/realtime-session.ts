/**
 * What every streaming transport (graphql-ws, graphql-sse, router callbacks)
 * shares once admission (src/access/admission.ts, `openStream`) has opened a
 * stream: the one builder of its context (`streamContext`, with the
 * RealtimeSource a subscription resolver reads its events from), and how a
 * streamed result goes out.
 */
import type { ExecutionResult, FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { createContext, type Context, type ContextDeps } from '../context.js';
import { overSize, tooLarge, type Caller } from '../access/admission.js';
import type { Logger } from '../logger.js';
import { attributeErrors, withRequestId, type OperationTelemetry } from '../observability/index.js';
import type { EventBus } from '../realtime/bus.js';
import type { Reconciler } from '../realtime/reconciler.js';
import type { RealtimeSource } from '../realtime/source.js';
import { boundedStream } from '../realtime/stream.js';

interface SourceOptions {
  bus: EventBus;
  reconciler: Reconciler;
  logger: Logger;
  caller: Caller;
  accountId: number;
  queueLimit: number;
  /** Extra pressure signal besides the queue: the transport's unsent bytes. */
  isCongested(): boolean;
  onOverflow(): void;
  /** Called before each event is handed out (fresh loaders per event). */
  beforeEach(): void;
}

function realtimeSource(o: SourceOptions): RealtimeSource {
  return {
    accountId: o.accountId,
    events: (select) =>
      boundedStream({
        bus: o.bus,
        accountId: o.accountId,
        select,
        limit: o.queueLimit,
        isCongested: o.isCongested,
        onOverflow: o.onOverflow,
        beforeEach: o.beforeEach,
      }),
    reconcile: (kind, current, isFinal) => {
      o.reconciler.observe(o.accountId, kind, current).catch((error: unknown) => {
        o.logger.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'current state not shared: ledger or bus failed');
      });
      return o.reconciler.watch({ accountId: o.accountId, kind, id: current.id, apiKey: o.caller.apiKey, isFinal });
    },
  };
}

export interface StreamContextOptions {
  context: ContextDeps;
  bus: EventBus;
  reconciler: Reconciler;
  /** From the opened stream (admission.openStream). */
  caller: Caller;
  accountId: number;
  telemetry: OperationTelemetry;
  queueLimit: number;
  /** Extra pressure signal besides the queue: the transport's unsent bytes. */
  isCongested(): boolean;
  onOverflow(): void;
}

/**
 * The context of one operation on a live stream, the same on every streaming transport: the context an HTTP
 * operation gets (its deadline included), and the RealtimeSource its subscription reads, which gives each
 * event a fresh upstream client, loaders and deadline (`refreshContext`).
 */
export function streamContext(o: StreamContextOptions): Context {
  const { config } = o.context;
  const forOperation = () => createContext(o.context, { caller: o.caller, accountId: o.accountId, deadlineAt: Date.now() + config.operationDeadlineMs, telemetry: o.telemetry });
  const context: Context = Object.assign(forOperation(), {
    realtime: realtimeSource({
      bus: o.bus,
      reconciler: o.reconciler,
      logger: o.context.logger,
      caller: o.caller,
      accountId: o.accountId,
      queueLimit: o.queueLimit,
      isCongested: o.isCongested,
      onOverflow: o.onOverflow,
      beforeEach: () => refreshContext(context, forOperation),
    }),
  });
  return context;
}

/**
 * Before each event of a subscription: a fresh upstream client, loaders, cache
 * scope and idempotency scope, with a new deadline, for the event's relations
 * are a new read of the world.
 */
function refreshContext(context: Context, forOperation: () => Context): void {
  const fresh = forOperation();
  context.api = fresh.api;
  context.loaders = fresh.loaders;
  context.entityCache = fresh.entityCache;
  context.idempotency = fresh.idempotency;
}

/**
 * One result of a streaming operation as the caller gets it, the same on both
 * streaming transports: errors formatted (in the operation's log context) and
 * marked with its request id, the answer-size cap HTTP applies, and the
 * telemetry told. Undefined: send the result as it is.
 */
export function streamedResult(
  result: FormattedExecutionResult | ExecutionResult,
  telemetry: OperationTelemetry | undefined,
  format: (errors: readonly GraphQLError[]) => GraphQLFormattedError[],
  maxBytes: number,
): FormattedExecutionResult | undefined {
  const raw = result.errors as readonly GraphQLError[] | undefined;
  if (raw && telemetry) attributeErrors(raw, telemetry);
  const errors = raw ? format(raw) : undefined;
  const marked = (list: GraphQLFormattedError[]) => (telemetry ? withRequestId(list, telemetry.requestId) : list);
  if (overSize(errors ? { ...result, errors } : result, maxBytes)) {
    const tooBig = format([tooLarge(maxBytes)]);
    telemetry?.answered(null, tooBig);
    return { errors: marked(tooBig) };
  }
  telemetry?.answered(result.data, errors);
  return errors ? { ...(result as FormattedExecutionResult), errors: marked(errors) } : undefined;
}
