/** The GraphQL context, built here only, so every transport's operation gets the same deadline, scopes and loaders. */
import type { Config, Limits } from './config.js';
import type { Caller } from './access/auth.js';
import { createLoaders, type Loaders } from './loaders/index.js';
import type { PaginationLimits } from './pagination.js';
import type { Logger } from './logger.js';
import type { EntityCache, EntityCacheScope, PendingKind } from './cache/index.js';
import type { PollWatches } from './cache/poll-watches.js';
import { uncached } from './cache/index.js';
import type { RealtimeSource } from './realtime/source.js';
import type { IdempotencyScope, IdempotencyStore } from './idempotency/index.js';
import type { PaymentsApi, PayoutModel, TransactionModel } from './upstream/index.js';
import type { BreakerState, OperationScope, RouteStats, UpstreamObserver } from './upstream/index.js';
import { unauthenticated } from './errors.js';
import { gatedApi, UpstreamGate } from './access/upstream-budget.js';
import type { KeyStatus } from './access/key-status.js';
import { admitCaller, type CallerRecord } from './access/caller.js';
import type { Observability, OperationTelemetry } from './observability/index.js';

export interface Context {
  api: PaymentsApi;
  /** Every call of `api` passes it first; it counts them for `extensions.cost`. */
  upstreamGate?: UpstreamGate;
  loaders: Loaders;
  /** A hash of the key: the scope of caches and records. */
  callerId: string;
  /** Decided once for the operation (src/access/caller.ts). */
  caller?: CallerRecord;
  pagination: PaginationLimits;
  limits: Readonly<Limits>;
  logger: Logger;
  telemetry: OperationTelemetry;
  entityCache: EntityCacheScope;
  /** WebSocket operations only. */
  realtime?: RealtimeSource;
  idempotency: IdempotencyScope;
}

/** What a context is made of: everything but the logger, which is read off the telemetry when first used. */
type ContextFields = Omit<Context, 'logger'>;

function contextOf(fields: ContextFields): Context {
  return new OperationContext(fields) as unknown as Context;
}

export const UPSTREAM_MAX_PER_PAGE = 100;

export interface UpstreamClientFactory {
  /** `scope` carries the operation's deadline; the operation's gate wraps the view from outside (access/upstream-budget.ts). */
  forKey(apiKey: string, scope: OperationScope): PaymentsApi;
  breakerStates?(): Record<string, BreakerState>;
  routeStats?(): Record<string, RouteStats>;
  observe?(observer: UpstreamObserver): () => void;
}

export interface ContextDeps {
  config: Readonly<Config>;
  keys: KeyStatus;
  upstream: UpstreamClientFactory;
  logger: Logger;
  entityCache: EntityCache;
  /** Pending objects polled, re-read by the reconciler while polls last; absent: none is. */
  polls?: PollWatches;
  idempotencyStore: IdempotencyStore;
  observability: Observability;
}

export interface OperationInput {
  /** `null` for an anonymous operation (introspection, the federation SDL): the auth gate refuses the rest. */
  caller: Caller | null;
  /** Epoch ms: no upstream call of this operation starts, and no retry waits, past it. */
  deadlineAt: number;
  idempotencyKeyHeader?: string;
  /** `Cache-Control: no-cache`: read the upstream, not the entity cache. */
  bypassCache?: boolean;
  /** The transport starts and ends it. */
  telemetry: OperationTelemetry;
  /** The caller's account, when the door looked it up (streams). */
  accountId?: number;
  /** False for a stream's reads: its subscription watches the object itself, and no poll follows. */
  watchPolls?: boolean;
}

/**
 * One operation's context. `extend`: what a transport adds, made from the context (HTTP's SDL and metrics
 * allowances), added in place: a copy would read the lazy logger and build it.
 */
export function createContext<Added extends object = Record<never, never>>(deps: ContextDeps, input: OperationInput, extend?: (context: Context) => Added): Context & Added {
  const context = operationContext(deps, input);
  return extend ? Object.assign(context, extend(context)) : (context as Context & Added);
}

/**
 * A stream's context: an operation's, with the RealtimeSource its subscription reads. Before each event its
 * client, upstream gate, loaders, cache scope and idempotency scope are made afresh from `input()` (a new deadline): an
 * event's relations are a new read of the world.
 */
export function createStreamContext(deps: ContextDeps, input: () => OperationInput, realtime: (beforeEach: () => void) => RealtimeSource): Context {
  const context = operationContext(deps, input());
  const beforeEach = () => {
    const fresh = operationContext(deps, input());
    context.api = fresh.api;
    // The gate that admits this event's calls: what reads the operation's calls reads this event's.
    context.upstreamGate = fresh.upstreamGate;
    context.loaders = fresh.loaders;
    context.entityCache = fresh.entityCache;
    context.idempotency = fresh.idempotency;
  };
  return Object.assign(context, { realtime: realtime(beforeEach) });
}

function operationContext(deps: ContextDeps, input: OperationInput): Context {
  const { caller, deadlineAt, telemetry } = input;
  const callerId = caller?.callerId ?? 'anonymous';
  const { observability } = deps;
  // What the key status knows of the caller, read once: everything below acts on this record.
  const record = caller ? admitCaller(deps.keys, caller, deps.config.limits, input.accountId ?? null) : undefined;
  // Every upstream call of the operation passes its gate first: budget, refused key, one probe of an unknown key.
  const upstreamGate = record ? new UpstreamGate(record, deps.keys) : undefined;
  const api = caller && record && upstreamGate
    ? gatedApi(deps.upstream.forKey(caller.apiKey, { deadlineAt, requestId: telemetry.requestId, observed: telemetry, keyId: record.callerId, onLargeAnswer: upstreamGate.priceAnswer }), upstreamGate)
    : anonymousApi();
  // A key not proven lately reads the upstream first: a revoked key gets none of its cached objects.
  const refresh = record !== undefined && !record.proven;
  const polls = deps.polls;
  const polled = caller && polls && input.watchPolls !== false ? (kind: PendingKind, value: TransactionModel | PayoutModel) => polls.polled(callerId, caller.apiKey, kind, value) : undefined;
  const entityCache = caller ? deps.entityCache.scope(callerId, { bypass: input.bypassCache ?? false, refresh, ...(polled ? { polled } : {}) }) : uncached;
  return contextOf({
    api,
    ...(upstreamGate ? { upstreamGate } : {}),
    callerId,
    ...(record ? { caller: record } : {}),
    loaders: createLoaders(api, entityCache, observability.loadersFor(telemetry)),
    pagination: deps.config.pagination,
    limits: deps.config.limits,
    telemetry,
    entityCache,
    idempotency: {
      store: deps.idempotencyStore,
      settings: deps.config.idempotency,
      headerKey: input.idempotencyKeyHeader,
      deadlineAt,
      observe: (outcome) => observability.idempotency(outcome),
      // One call proves a key not proven lately before its stored results are replayed: a revoked key gets none.
      ...(refresh ? { verifyCaller: () => api.currencies.list().then(() => undefined) } : {}),
    },
  });
}

// A class so the lazy `logger` getter sits on the prototype: Apollo copies a context's own fields,
// which would build it. Extend with `Object.assign`, not a spread. Its fields are copied whole, so
// their list is written once (in Context).
class OperationContext {
  constructor(fields: ContextFields) {
    Object.assign(this, fields);
  }

  get logger(): Logger {
    return (this as unknown as ContextFields).telemetry.logger;
  }
}

/** Stand-in client of an anonymous operation: the auth gate refuses every field that would use it. */
function anonymousApi(): PaymentsApi {
  const refuse = () => {
    throw unauthenticated('Authentication required: send "Authorization: Bearer <secret API key>".');
  };
  return new Proxy({} as PaymentsApi, { get: () => new Proxy({}, { get: () => refuse }) });
}
