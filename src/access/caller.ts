/**
 * The caller of one operation, decided once when the operation is admitted
 * (its context is made, context.ts) and frozen: later code reads this record
 * instead of asking the key status again, so every part of the operation
 * (the entity cache, stored idempotent results, the upstream gate, the SDL
 * and metrics allowances of graphql-route.ts) acts on the same view.
 */
import type { Caller } from '../auth.js';
import type { Limits } from '../config.js';
import type { KeyStatus } from './key-status.js';

export interface CallerRecord {
  /** The key's hash (auth.ts `callerId`): the scope of caches and records, never the key itself. */
  readonly callerId: string;
  /**
   * Accepted by the upstream within KEY_REVALIDATE_MS: the entity cache and stored results may serve it. Otherwise it
   * is due for proof: the operation reads the upstream first, which proves the key or revokes it.
   */
  readonly proven: boolean;
  /** Accepted within the last ten minutes: its upstream calls go out in parallel. Otherwise one probe call goes first. */
  readonly known: boolean;
  /** The most upstream calls the operation may make (MAX_UPSTREAM_CALLS_PER_OPERATION). */
  readonly maxUpstreamCalls: number;
  /** The key's account, as the door looked it up for a stream; null for an operation that needs none (HTTP). */
  readonly accountId: number | null;
}

/** The record of `caller` as the key status knows it now. */
export function admitCaller(keys: KeyStatus, caller: Pick<Caller, 'callerId'>, limits: Pick<Limits, 'maxUpstreamCalls'>, accountId: number | null = null): CallerRecord {
  const { callerId } = caller;
  return Object.freeze({ callerId, proven: keys.isProven(callerId), known: keys.isKnown(callerId), maxUpstreamCalls: limits.maxUpstreamCalls, accountId });
}
