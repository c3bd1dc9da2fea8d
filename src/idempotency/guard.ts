/**
 * `idempotent()`: a mutation runs at most once per (caller, key, input) (docs/graphql-contract.md, Idempotency).
 * A failure releases the record so the client may retry: safe after an ambiguous write time-out because the key
 * is forwarded upstream as `Idempotency-Key`, and the upstream replays its first answer.
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
  ttlMs: number;
  waitMs: number;
  /** How long a running record holds the key if its owner crashed. */
  lockMs: number;
  /** Counted in UTF-16 bytes, echoed input left out. */
  recordMaxBytes?: number;
}

export interface IdempotencyScope {
  store: IdempotencyStore;
  settings: IdempotencySettings;
  headerKey: string | undefined;
  /** A duplicate never waits past the operation's deadline (epoch ms). */
  deadlineAt: number;
  observe?: (outcome: IdempotencyOutcome) => void;
  /** Proves the caller's key before a replay (which calls no upstream that would refuse a revoked key). */
  verifyCaller?: () => Promise<void>;
}

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

export interface IdempotentCall {
  /** The first call claims the key: validate locally before it, so refused input never takes a record. */
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

class Replay {
  constructor(readonly result: unknown) {}
}

export interface IdempotentOptions {
  /** Identical unkeyed calls of one caller join the running one: for writes the payer feels (a send's phone prompt). */
  coalesceUnkeyed?: boolean;
}

const inFlightByStore = new WeakMap<IdempotencyStore, InFlight>();

function inFlightFor(store: IdempotencyStore): InFlight {
  let inFlight = inFlightByStore.get(store);
  if (!inFlight) {
    inFlight = new InFlight();
    inFlightByStore.set(store, inFlight);
  }
  return inFlight;
}

/** The key is the field's `idempotencyKey`, or the `Idempotency-Key` header when the operation has one mutation field. */
export function idempotent<TParent, TArgs extends { idempotencyKey?: string | null }, TContext extends GuardContext, TResult>(
  resolve: (parent: TParent, args: TArgs, context: TContext, call: IdempotentCall, info: GraphQLResolveInfo) => Promise<TResult>,
  options: IdempotentOptions = {},
): (parent: TParent, args: TArgs, context: TContext, info: GraphQLResolveInfo) => Promise<TResult> {
  return async (parent, args, context, info) => {
    const scope = context.idempotency;
    const key = resolveKey(args.idempotencyKey, scope.headerKey, info);
    // Nesting this deep is custom metadata the mutation's own rule refuses (nothing is sent), and would overflow the
    // stack when fingerprinted.
    if (!nestsWithin(args, MAX_NESTING)) return resolve(parent, args, context, NO_KEY, info);
    if (key === undefined) {
      const run = () => resolve(parent, args, context, NO_KEY, info);
      if (!options.coalesceUnkeyed) return run();
      return inFlightFor(scope.store).join(context.callerId, fingerprint(info.fieldName, args), run);
    }
    const run = keyedRun(context, scope, key, fingerprint(info.fieldName, args), args);
    try {
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

function keyedRun(context: GuardContext, scope: IdempotencyScope, key: string, fp: string, args: object) {
  const { store, settings, deadlineAt } = scope;
  const recordKey = recordKeyFor(context.callerId, key);
  let claim: Promise<string> | null = null;
  let owner: string | null = null;

  const unavailable = (error: unknown): never => {
    context.logger.error({ err: error }, 'idempotency store unreachable: keyed mutation not sent');
    throw idempotencyUnavailable();
  };

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

  let claimedAt = 0;
  const take = async (): Promise<string> => {
    const waitUntil = Math.min(Date.now() + settings.waitMs, deadlineAt);
    for (;;) {
      claimedAt = Date.now();
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
    async succeeded(result: unknown): Promise<unknown> {
      if (owner === null) {
        // No upstream write: nothing to remember, but a duplicate that ran meanwhile may have acted.
        await replayIfDone();
        return result;
      }
      // The side effect has happened: answer it even if the record cannot be stored now.
      const json = encodeResult(result, args, settings.recordMaxBytes ?? DEFAULT_RECORD_MAX_BYTES);
      const complete = () => store.complete(recordKey, owner!, fp, json, settings.ttlMs, context.callerId);
      await complete().catch((e: unknown) => {
        context.logger.error({ err: e }, 'idempotency result could not be stored');
        // Tried again while the claim's lock holds the key: a store back within it keeps the result, so a resend
        // replays instead of claiming the key anew once the lock lapses and acting a second time.
        completeLater(complete, claimedAt + settings.lockMs);
      });
      return result;
    },
    async failed(error: unknown): Promise<void> {
      if (owner === null) return;
      // A refused API key wrote nothing: its record expires at once, so rejected keys cannot fill the store.
      const refused = error instanceof UpstreamAuthenticationError || error instanceof UpstreamPermissionError;
      await store.release(recordKey, owner, fp, refused ? 1 : settings.ttlMs, context.callerId).catch((e: unknown) => {
        context.logger.error({ err: e }, 'idempotency record could not be released; it frees itself when its lock expires');
      });
    },
  };
}

/** How often a result the store refused is offered again, until its claim's lock lapses. */
export const COMPLETE_RETRY_MS = 250;

function completeLater(complete: () => Promise<boolean>, until: number): void {
  const again = () => {
    if (Date.now() >= until) return;
    complete().catch(() => setTimeout(again, COMPLETE_RETRY_MS).unref());
  };
  setTimeout(again, COMPLETE_RETRY_MS).unref();
}

/** Scoped by caller, and hashed: the raw key never becomes a storage key. */
export function recordKeyFor(callerId: string, key: string): string {
  return createHash('sha256').update(callerId).update('\0').update(key).digest('hex');
}

export function fingerprint(fieldName: string, args: object): string {
  const { idempotencyKey: _key, ...rest } = args as Record<string, unknown>;
  return createHash('sha256').update(fieldName).update('\n').update(canonicalJson(rest)).digest('hex');
}

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
