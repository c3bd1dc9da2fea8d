/** What every streaming transport shares once admission has opened a stream: its context, and how a result goes out. */
import type { ExecutionResult, FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { createStreamContext, type Context, type ContextDeps } from '../context.js';
import type { Admission, Caller } from '../access/admission.js';
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
  caller: Caller;
  accountId: number;
  telemetry: OperationTelemetry;
  queueLimit: number;
  /** Extra pressure signal besides the queue: the transport's unsent bytes. */
  isCongested(): boolean;
  onOverflow(): void;
}

/** An HTTP operation's context plus the RealtimeSource its subscription reads, the same on every streaming transport. */
export function streamContext(o: StreamContextOptions): Context {
  const { config } = o.context;
  const input = () => ({ caller: o.caller, accountId: o.accountId, deadlineAt: Date.now() + config.operationDeadlineMs, telemetry: o.telemetry, watchPolls: false });
  return createStreamContext(o.context, input, (beforeEach) =>
    realtimeSource({
      bus: o.bus,
      reconciler: o.reconciler,
      logger: o.context.logger,
      caller: o.caller,
      accountId: o.accountId,
      queueLimit: o.queueLimit,
      isCongested: o.isCongested,
      onOverflow: o.onOverflow,
      beforeEach,
    }),
  );
}

/** A streamed result as HTTP would answer it (errors formatted, request id, size cap); undefined: send it as it is. */
export function streamedResult(
  result: FormattedExecutionResult | ExecutionResult,
  telemetry: OperationTelemetry | undefined,
  format: (errors: readonly GraphQLError[]) => GraphQLFormattedError[],
  answers: Pick<Admission['documents'], 'overSize' | 'tooLarge'>,
): FormattedExecutionResult | undefined {
  const raw = result.errors as readonly GraphQLError[] | undefined;
  if (raw && telemetry) attributeErrors(raw, telemetry);
  const errors = raw ? format(raw) : undefined;
  const marked = (list: GraphQLFormattedError[]) => (telemetry ? withRequestId(list, telemetry.requestId) : list);
  if (answers.overSize(errors ? { ...result, errors } : result)) {
    const tooBig = format([answers.tooLarge()]);
    telemetry?.answered(null, tooBig);
    return { errors: marked(tooBig) };
  }
  telemetry?.answered(result.data, errors);
  return errors ? { ...(result as FormattedExecutionResult), errors: marked(errors) } : undefined;
}
