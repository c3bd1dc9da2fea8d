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
 * replays its first answer instead of acting twice (src/emulator/server.ts
 * shows the same behaviour). Without a key nothing is recorded and a write is
 * never retried.
 */
import { createHash } from 'node:crypto';
import { GraphQLError, Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { badUserInput, ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CallOptions } from '../upstream/api.js';
import type { IdempotencyStore } from './store.js';

export interface IdempotencySettings {
  /** How long a completed (or released) record is kept. */
  ttlMs: number;
  /** How long a duplicate waits for a running first request before IDEMPOTENCY_IN_PROGRESS. */
  waitMs: number;
  /** How long a running record holds the key if its owner never finishes (crash). */
  lockMs: number;
}

/** Per request: what the guard needs from the context. */
export interface IdempotencyScope {
  store: IdempotencyStore;
  settings: IdempotencySettings;
  /** The `Idempotency-Key` HTTP header, if sent. */
  headerKey: string | undefined;
  /** The operation's deadline (epoch ms): a duplicate never waits past it. */
  deadlineAt: number;
}

interface GuardContext {
  callerId: string;
  /** Absent where no store is wired (operations over WebSocket): a key is then refused, never ignored. */
  idempotency?: IdempotencyScope;
  logger: Logger;
}

/** What the wrapped resolver passes to its upstream calls. */
export interface IdempotentCall {
  /** Call options for the mutation's upstream write; `step` names a second write of the same mutation. */
  options(step?: string): CallOptions;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;
const NO_KEY: IdempotentCall = { options: () => ({}) };

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

/**
 * Wraps a mutation resolver. The key is the field's `idempotencyKey`
 * argument, or the `Idempotency-Key` header when the operation has a single
 * mutation field.
 */
export function idempotent<TParent, TArgs extends { idempotencyKey?: string | null }, TContext extends GuardContext, TResult>(
  resolve: (parent: TParent, args: TArgs, context: TContext, call: IdempotentCall, info: GraphQLResolveInfo) => Promise<TResult>,
): (parent: TParent, args: TArgs, context: TContext, info: GraphQLResolveInfo) => Promise<TResult> {
  return async (parent, args, context, info) => {
    const scope = context.idempotency;
    const key = resolveKey(args.idempotencyKey, scope?.headerKey, info);
    if (key === undefined) return resolve(parent, args, context, NO_KEY, info);
    if (!scope) throw badUserInput('Idempotency keys are honoured on POST /graphql only; send this mutation over HTTP.', 'idempotencyKey');
    const call: IdempotentCall = { options: (step) => ({ idempotencyKey: step ? `${key}:${step}` : key }) };
    return runOnce(context, scope, key, fingerprint(info.fieldName, args), () => resolve(parent, args, context, call, info));
  };
}

async function runOnce<T>(context: GuardContext, scope: IdempotencyScope, key: string, fp: string, work: () => Promise<T>): Promise<T> {
  const { store, settings, deadlineAt } = scope;
  const recordKey = recordKeyFor(context.callerId, key);
  const waitUntil = Math.min(Date.now() + settings.waitMs, deadlineAt);
  for (;;) {
    const claim = await store.claim(recordKey, fp, settings.lockMs);
    if (claim.kind === 'completed') return JSON.parse(claim.json) as T;
    if (claim.kind === 'mismatch') throw idempotencyKeyReused();
    if (claim.kind === 'in_progress') {
      const left = waitUntil - Date.now();
      if (left <= 0) throw idempotencyInProgress();
      await store.changed(recordKey, left);
      continue;
    }
    let result: T;
    try {
      result = await work();
    } catch (error) {
      await store.release(recordKey, claim.owner, fp, settings.ttlMs).catch((e: unknown) => {
        context.logger.error({ err: e }, 'idempotency record could not be released; it frees itself when its lock expires');
      });
      throw error;
    }
    // The side effect has happened: answer it even if the record cannot be stored.
    await store.complete(recordKey, claim.owner, fp, JSON.stringify(result), settings.ttlMs).catch((e: unknown) => {
      context.logger.error({ err: e }, 'idempotency result could not be stored');
    });
    return result;
  }
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
  const count = (set: SelectionSetNode): number =>
    set.selections.reduce((n, sel) => {
      if (sel.kind === Kind.FIELD) return n + (sel.name.value === '__typename' ? 0 : 1);
      if (sel.kind === Kind.INLINE_FRAGMENT) return n + count(sel.selectionSet);
      const fragment = info.fragments[sel.name.value];
      return n + (fragment ? count(fragment.selectionSet) : 0);
    }, 0);
  return count(info.operation.selectionSet);
}
