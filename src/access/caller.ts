/** The caller of one operation, decided once at admission and frozen, so every part of the operation acts on one view. */
import type { Caller } from './auth.js';
import type { Limits } from '../config.js';
import type { KeyStatus } from './key-status.js';

export interface CallerRecord {
  /** The key's hash (`callerId` of auth.ts): the scope of caches and records, never the key itself. */
  readonly callerId: string;
  /** Within KEY_REVALIDATE_MS: caches may serve it; otherwise the operation reads the upstream first. */
  readonly proven: boolean;
  /** Accepted within the last ten minutes: its upstream calls go out in parallel. Otherwise one probe call goes first. */
  readonly known: boolean;
  readonly maxUpstreamCalls: number;
  /** The key's account, as the door looked it up for a stream; null for an operation that needs none (HTTP). */
  readonly accountId: number | null;
}

export function admitCaller(keys: KeyStatus, caller: Pick<Caller, 'callerId'>, limits: Pick<Limits, 'maxUpstreamCalls'>, accountId: number | null = null): CallerRecord {
  const { callerId } = caller;
  return Object.freeze({ callerId, proven: keys.isProven(callerId), known: keys.isKnown(callerId), maxUpstreamCalls: limits.maxUpstreamCalls, accountId });
}
