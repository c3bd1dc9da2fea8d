/**
 * Idempotent mutations at the GraphQL layer. A mutation resolver wrapped with
 * `idempotent` runs at most once per (caller, idempotency key, input): a
 * duplicate gets the first result again (the resolver's payload value, so it
 * resolves the same objects), a duplicate arriving while the first still runs
 * waits for it (bounded), and the same key with another input is refused.
 *
 * Failures are not results. When the resolver throws (a GraphQL error: time-out,
 * 5xx, breaker open...) the record is released, bound to its input, so the
 * client may retry with the same key. An upstream time-out on a write is
 * ambiguous (the upstream may have acted); the retry is still safe because
 * the key is forwarded upstream as `Idempotency-Key`, and the upstream
 * replays its first answer instead of acting twice (emulator/server.ts
 * shows the same behaviour). Without a key nothing is recorded and a write is
 * never retried; a mutation wrapped with `{ coalesceUnkeyed: true }` joins an
 * identical unkeyed call of the same caller still running (in-flight.ts).
 */
import { createHash } from 'node:crypto';
import { GraphQLError, type GraphQLResolveInfo } from 'graphql';
import { selectedFieldNames } from '../graphql/selection.js';
import { badUserInput, ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CallOptions } from '../upstream/index.js';
import { UpstreamAuthenticationError, UpstreamPermissionError } from '../upstream/index.js';
import { MAX_NESTING, nestsWithin } from '../upstream/index.js';
import { InFlight } from './in-flight.js';
import { decodeResult, encodeResult } from './result.js';
import type { IdempotencyStore } from './store.js';

export interface IdempotencySettings {
  /** How long a completed (or released) record is kept. */
  ttlMs: number;
  /** How long a duplicate waits for a running first request before IDEMPOTENCY_IN_PROGRESS. */
  waitMs: number;
  /** How long a running record holds the key if its owner never finishes (crash). */
  lockMs: number;
  /** A result over this (UTF-16 bytes, echoed input left out) is not kept; default 1 MiB. */
  recordMaxBytes?: number;
}

/** Per request: what the guard needs from the context. */
export interface IdempotencyScope {
  store: IdempotencyStore;
  settings: IdempotencySettings;
  /** The `Idempotency-Key` HTTP header, if sent. */
  headerKey: string | undefined;
  /** The operation's deadline (epoch ms): a duplicate never waits past it. */
  deadlineAt: number;
  /** Told how each keyed mutation went (metrics). */
  observe?: (outcome: IdempotencyOutcome) => void;
  /**
   * Resolves when the caller's key is good, before a stored result is replayed to it (a replay calls no
   * upstream that would refuse a revoked key); rejects with the refusal. Absent: the key was proven lately.
   */
  verifyCaller?: () => Promise<void>;
}

/**
 * How a keyed mutation went: `executed` (first of its key, ran), `replayed`
 * (the first's result again), `conflict` (same key, other input),
 * `in_progress` (the first was still running), `unavailable` (no store).
 */
export type IdempotencyOutcome = 'executed' | 'replayed' | 'conflict' | 'in_progress' | 'unavailable';

function outcomeOf(error: unknown): IdempotencyOutcome | null {
  if (error instanceof Replay) return 'replayed';
  const code = error instanceof GraphQLError ? error.extensions.code : undefined;
  if (code === ErrorCode.IDEMPOTENCY_KEY_REUSED) return 'conflict';
  if (code === ErrorCode.IDEMPOTENCY_IN_PROGRESS) return 'in_progress';
  if (code === ErrorCode.IDEMPOTENCY_UNAVAILABLE) return 'unavailable';
  if (code === ErrorCode.IDEMPOTENCY_RESULT_NOT_KEPT) return 'replayed';
  return null;
}

interface GuardContext {
  callerId: string;
  idempotency: IdempotencyScope;
  logger: Logger;
}

/** What the wrapped resolver passes to its upstream calls. */
export interface IdempotentCall {
  /**
   * Call options for the mutation's upstream write; `step` names a second
   * write of the same mutation. The first call claims the key: do local
   * validation before it, so refused input never takes a record.
   */
  options(step?: string): Promise<CallOptions>;
}

const DEFAULT_RECORD_MAX_BYTES = 1024 * 1024;
const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;
const NO_KEY: IdempotentCall = { options: async () => ({}) };

export function idempotencyKeyReused(): GraphQLError {
  return new GraphQLError(
    'This idempotency key was already used with a different input; use a new key for a new request.',
    { extensions: { code: ErrorCode.IDEMPOTENCY_KEY_REUSED } },
  );
}

export function idempotencyInProgress(): GraphQLError {
  return new GraphQLError(
    'A request with this idempotency key is still running; retry with the same key shortly to get its result.',
    { extensions: { code: ErrorCode.IDEMPOTENCY_IN_PROGRESS } },
  );
}

function idempotencyUnavailable(): GraphQLError {
  return new GraphQLError(
    'Idempotency records cannot be kept right now, so this keyed mutation was not sent; retry shortly.',
    { extensions: { code: ErrorCode.IDEMPOTENCY_UNAVAILABLE } },
  );
}

/** Thrown out of `options()` when the key already has a result: the resolver stops and the first result is the answer. */
class Replay {
  constructor(readonly result: unknown) {}
}

export interface IdempotentOptions {
  /**
   * Unkeyed calls identical to one of the same caller still running join it
   * (one upstream write, one result for all): for a write whose repeat the
   * payer feels, such as the phone prompt of a send.
   */
  coalesceUnkeyed?: boolean;
}

/** Unkeyed calls running per gateway: one registry per idempotency store, which each gateway has its own of. */
const inFlightByStore = new WeakMap<IdempotencyStore, InFlight>();

function inFlightFor(store: IdempotencyStore): InFlight {
  let inFlight = inFlightByStore.get(store);
  if (!inFlight) {
    inFlight = new InFlight();
    inFlightByStore.set(store, inFlight);
  }
  return inFlight;
}

/**
 * Wraps a mutation resolver. The key is the field's `idempotencyKey`
 * argument, or the `Idempotency-Key` header when the operation has a single
 * mutation field.
 */
export function idempotent<TParent, TArgs extends { idempotencyKey?: string | null }, TContext extends GuardContext, TResult>(
  resolve: (parent: TParent, args: TArgs, context: TContext, call: IdempotentCall, info: GraphQLResolveInfo) => Promise<TResult>,
  options: IdempotentOptions = {},
): (parent: TParent, args: TArgs, context: TContext, info: GraphQLResolveInfo) => Promise<TResult> {
  return async (parent, args, context, info) => {
    const scope = context.idempotency;
    const key = resolveKey(args.idempotencyKey, scope.headerKey, info);
    // Arguments nested this deep can only be custom metadata deeper than the mutation's own rule
    // allows (payments/rules.ts): it refuses them with a user error and sends nothing, so there is
    // nothing to guard, and fingerprinting them would overflow the stack.
    if (!nestsWithin(args, MAX_NESTING)) return resolve(parent, args, context, NO_KEY, info);
    if (key === undefined) {
      const run = () => resolve(parent, args, context, NO_KEY, info);
      if (!options.coalesceUnkeyed) return run();
      return inFlightFor(scope.store).join(context.callerId, fingerprint(info.fieldName, args), run);
    }
    const run = keyedRun(context, scope, key, fingerprint(info.fieldName, args), args);
    try {
      // A key that already has a result answers at once: a replay reads and writes nothing.
      await run.replayIfDone();
      const result = await resolve(parent, args, context, run.call, info);
      const answer = (await run.succeeded(result)) as TResult;
      scope.observe?.('executed');
      return answer;
    } catch (error) {
      const outcome = outcomeOf(error);
      if (outcome) scope.observe?.(outcome);
      if (error instanceof Replay) return error.result as TResult;
      await run.failed(error);
      throw error;
    }
  };
}

/** One keyed execution: the claim taken at the first upstream write, then completed or released. */
function keyedRun(context: GuardContext, scope: IdempotencyScope, key: string, fp: string, args: object) {
  const { store, settings, deadlineAt } = scope;
  const recordKey = recordKeyFor(context.callerId, key);
  let claim: Promise<string> | null = null;
  let owner: string | null = null;

  const unavailable = (error: unknown): never => {
    context.logger.error({ err: error }, 'idempotency store unreachable: keyed mutation not sent');
    throw idempotencyUnavailable();
  };

  /** Replays a finished record (waiting for a running one); returns when there is none to replay. */
  const replayIfDone = async (): Promise<void> => {
    const waitUntil = Math.min(Date.now() + settings.waitMs, deadlineAt);
    for (;;) {
      const found = await store.peek(recordKey, fp, context.callerId).catch(unavailable);
      if (found.kind === 'none') return;
      if (found.kind === 'completed') {
        await scope.verifyCaller?.();
        throw new Replay(decodeResult(found.json, args));
      }
      if (found.kind === 'mismatch') throw idempotencyKeyReused();
      const left = waitUntil - Date.now();
      if (left <= 0) throw idempotencyInProgress();
      await store.changed(recordKey, left);
    }
  };

  const take = async (): Promise<string> => {
    const waitUntil = Math.min(Date.now() + settings.waitMs, deadlineAt);
    for (;;) {
      const found = await store.claim(recordKey, fp, settings.lockMs, context.callerId).catch(unavailable);
      if (found.kind === 'acquired') return found.owner;
      if (found.kind === 'completed') {
        await scope.verifyCaller?.();
        throw new Replay(decodeResult(found.json, args));
      }
      if (found.kind === 'mismatch') throw idempotencyKeyReused();
      if (found.kind === 'full') throw idempotencyUnavailable();
      const left = waitUntil - Date.now();
      if (left <= 0) throw idempotencyInProgress();
      await store.changed(recordKey, left);
    }
  };

  return {
    replayIfDone,
    call: {
      async options(step?: string): Promise<CallOptions> {
        claim ??= take();
        owner = await claim;
        return { idempotencyKey: step ? `${key}:${step}` : key };
      },
    } satisfies IdempotentCall,
    /** The answer to give: this run's result, or the first run's when this one wrote nothing. */
    async succeeded(result: unknown): Promise<unknown> {
      if (owner === null) {
        // No upstream write (input refused locally, or nothing left to do): nothing to remember.
        // A duplicate that ran meanwhile may have acted: then its result is the answer.
        await replayIfDone();
        return result;
      }
      // The side effect has happened: answer it even if the record cannot be stored.
      const json = encodeResult(result, args, settings.recordMaxBytes ?? DEFAULT_RECORD_MAX_BYTES);
      await store.complete(recordKey, owner, fp, json, settings.ttlMs, context.callerId).catch((e: unknown) => {
        context.logger.error({ err: e }, 'idempotency result could not be stored');
      });
      return result;
    },
    async failed(error: unknown): Promise<void> {
      if (owner === null) return;
      // An API key the upstream refused wrote nothing: its record expires at once (1 ms), so a flood
      // of rejected keys cannot fill the store for a day.
      const refused = error instanceof UpstreamAuthenticationError || error instanceof UpstreamPermissionError;
      await store.release(recordKey, owner, fp, refused ? 1 : settings.ttlMs, context.callerId).catch((e: unknown) => {
        context.logger.error({ err: e }, 'idempotency record could not be released; it frees itself when its lock expires');
      });
    },
  };
}

/** Scoped by caller, and hashed: the raw key never becomes a storage key. */
export function recordKeyFor(callerId: string, key: string): string {
  return createHash('sha256').update(callerId).update('\0').update(key).digest('hex');
}

/** sha256 of the field name and the canonical JSON of every other argument. */
export function fingerprint(fieldName: string, args: object): string {
  const { idempotencyKey: _key, ...rest } = args as Record<string, unknown>;
  return createHash('sha256').update(fieldName).update('\n').update(canonicalJson(rest)).digest('hex');
}

/** JSON with object keys sorted at every level (Dates and URLs by their toJSON). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_name, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function resolveKey(argument: string | null | undefined, header: string | undefined, info: GraphQLResolveInfo): string | undefined {
  if (header !== undefined && countMutationFields(info) !== 1) {
    throw badUserInput(
      'The Idempotency-Key header applies to an operation with a single mutation field; give each field its own `idempotencyKey` argument instead.',
      'Idempotency-Key',
    );
  }
  if (argument != null && header !== undefined && argument !== header) {
    throw badUserInput('`idempotencyKey` and the Idempotency-Key header differ; send one of them.', 'idempotencyKey');
  }
  const key = argument ?? header;
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) {
    throw badUserInput('`idempotencyKey` must be 1 to 200 visible ASCII characters (a UUID fits).', 'idempotencyKey');
  }
  return key;
}

function countMutationFields(info: GraphQLResolveInfo): number {
  if (info.operation.operation !== 'mutation') return 0;
  return selectedFieldNames(info.operation.selectionSet, info.fragments, info.variableValues).filter((name) => name !== '__typename').length;
}
