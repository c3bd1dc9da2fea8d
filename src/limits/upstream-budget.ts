/**
 * The last guards between one operation and the upstream, whatever got past
 * the cost limit:
 * - a budget of upstream calls per operation (a field over it fails with
 *   UPSTREAM_BUDGET_EXCEEDED, the rest of the answer stands);
 * - short-circuit on rejection: once the upstream says 401 or 403 for this
 *   key, the operation's remaining calls fail at once without being made;
 * - a key not yet seen accepted sends one call first; the operation's other
 *   calls wait for its answer, so a refused key costs one call, not a fan-out;
 * - rejected keys remembered briefly (bounded memory), so a flood of bad
 *   keys costs the upstream one call per key per `REJECTED_KEY_TTL_MS`.
 * A 403 is not remembered across operations: it may concern one route only.
 */
import { GraphQLError } from 'graphql';
import { LRUCache } from 'lru-cache';
import { ErrorCode } from '../errors.js';
import type { PaymentsApi } from '../upstream/api.js';
import { UpstreamAuthenticationError, UpstreamError, UpstreamPermissionError } from '../upstream/errors.js';

/** How long a key the upstream accepted counts as good (its later calls go out in parallel at once). */
const ACCEPTED_TTL_MS = 10 * 60_000;

export class RejectedKeys {
  private readonly keys: LRUCache<string, true> | null;
  private readonly accepted = new LRUCache<string, true>({ max: 10_000, ttl: ACCEPTED_TTL_MS });

  constructor(ttlMs: number, max = 10_000) {
    this.keys = ttlMs > 0 ? new LRUCache<string, true>({ max, ttl: ttlMs }) : null;
  }

  remember(callerId: string): void {
    this.accepted.delete(callerId);
    this.keys?.set(callerId, true);
  }

  has(callerId: string): boolean {
    return this.keys?.has(callerId) ?? false;
  }

  accept(callerId: string): void {
    this.accepted.set(callerId, true);
  }

  isAccepted(callerId: string): boolean {
    return this.accepted.has(callerId);
  }
}

function upstreamBudgetExceeded(limit: number): GraphQLError {
  return new GraphQLError(`This operation reached its budget of ${limit} upstream calls; this field was not read.`, {
    extensions: { code: ErrorCode.UPSTREAM_BUDGET_EXCEEDED, limit },
  });
}

export interface GuardOptions {
  maxCalls: number;
  callerId: string;
  rejectedKeys: RejectedKeys;
}

/** The caller's client, counted and cut off as above; one per operation. */
export function guardUpstream(api: PaymentsApi, { maxCalls, callerId, rejectedKeys }: GuardOptions): PaymentsApi {
  let calls = 0;
  let rejection: Error | null = null;
  /** The first call of a key not yet seen accepted; the others wait for its answer. */
  let probe: Promise<unknown> | null = null;

  const send = async (call: (...args: unknown[]) => Promise<unknown>, args: unknown[]): Promise<unknown> => {
    try {
      const result = await call(...args);
      rejectedKeys.accept(callerId);
      return result;
    } catch (error) {
      if (error instanceof UpstreamAuthenticationError || error instanceof UpstreamPermissionError) {
        rejection ??= error;
        if (error instanceof UpstreamAuthenticationError) rejectedKeys.remember(callerId);
      } else if (error instanceof UpstreamError && error.statusCode !== undefined) {
        // Any other answer of the upstream (404, 422...) means it took the key.
        rejectedKeys.accept(callerId);
      }
      throw error;
    }
  };

  const guard = (call: (...args: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]): Promise<unknown> => {
      if (rejection) throw rejection;
      if (calls >= maxCalls) throw upstreamBudgetExceeded(maxCalls);
      calls += 1;
      if (!rejectedKeys.isAccepted(callerId)) {
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
  return new Proxy(api, {
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
}
