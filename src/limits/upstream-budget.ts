/**
 * The last guards between one operation and the upstream, whatever got past
 * the cost limit:
 * - a budget of upstream calls per operation (a field over it fails with
 *   UPSTREAM_BUDGET_EXCEEDED, the rest of the answer stands);
 * - short-circuit on rejection: once the upstream says 401 or 403 for this
 *   key, the operation's remaining calls fail at once without being made;
 * - a key not yet seen accepted sends one call first; the operation's other
 *   calls wait for its answer, so a refused key costs one call, not a fan-out;
 * - what the upstream says of the key is told to `KeyStatus` (key-status.ts):
 *   a 401 revokes it everywhere, any other answer proves it.
 * A 403 is not remembered across operations: it may concern one route only.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';
import type { PaymentsApi } from '../upstream/api.js';
import { refusalProvesKey, type KeyStatus } from './key-status.js';
import { UpstreamAuthenticationError, UpstreamPermissionError } from '../upstream/errors.js';

function upstreamBudgetExceeded(limit: number): GraphQLError {
  return new GraphQLError(`This operation reached its budget of ${limit} upstream calls; this field was not read.`, {
    extensions: { code: ErrorCode.UPSTREAM_BUDGET_EXCEEDED, limit },
  });
}

export interface GuardOptions {
  maxCalls: number;
  callerId: string;
  keys: KeyStatus;
}

/** Upstream calls each guarded client has made so far, for `extensions.cost`. */
const callsMade = new WeakMap<object, () => number>();

/** The calls an operation's guarded client made (0 for any other value: an anonymous operation makes none). */
export function upstreamCallsOf(api: unknown): number {
  return typeof api === 'object' && api !== null ? (callsMade.get(api)?.() ?? 0) : 0;
}

/** The caller's client, counted and cut off as above; one per operation. */
export function guardUpstream(api: PaymentsApi, { maxCalls, callerId, keys }: GuardOptions): PaymentsApi {
  let calls = 0;
  let rejection: Error | null = null;
  /** The first call of a key not yet seen accepted; the others wait for its answer. */
  let probe: Promise<unknown> | null = null;

  const send = async (call: (...args: unknown[]) => Promise<unknown>, args: unknown[]): Promise<unknown> => {
    try {
      const result = await call(...args);
      keys.accept(callerId);
      return result;
    } catch (error) {
      if (error instanceof UpstreamAuthenticationError || error instanceof UpstreamPermissionError) {
        rejection ??= error;
        if (error instanceof UpstreamAuthenticationError) keys.revoke(callerId);
      } else if (refusalProvesKey(error)) {
        // A refusal of the request itself (404, 422...) means the upstream took the key.
        keys.accept(callerId);
      }
      throw error;
    }
  };

  const guard = (call: (...args: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]): Promise<unknown> => {
      if (rejection) throw rejection;
      if (calls >= maxCalls) throw upstreamBudgetExceeded(maxCalls);
      calls += 1;
      if (!keys.isKnown(callerId)) {
        if (!probe) {
          probe = send(call, args);
          return probe;
        }
        await probe.catch(() => undefined);
        if (rejection) throw rejection;
      }
      return send(call, args);
    };
  const resources = new Map<PropertyKey, unknown>();
  const guarded = new Proxy(api, {
    get(target, resource, receiver) {
      const value = Reflect.get(target, resource, receiver) as unknown;
      if (typeof value !== 'object' || value === null) return value;
      let wrapped = resources.get(resource);
      if (!wrapped) {
        const verbs = value as Record<PropertyKey, unknown>;
        wrapped = new Proxy(verbs, {
          get: (v, verb) => {
            const fn = v[verb];
            return typeof fn === 'function' ? guard((fn as (...a: unknown[]) => Promise<unknown>).bind(v)) : fn;
          },
        });
        resources.set(resource, wrapped);
      }
      return wrapped;
    },
  });
  callsMade.set(guarded, () => calls);
  return guarded;
}
