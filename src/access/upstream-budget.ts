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
import type { OperationGate } from '../upstream/index.js';
import { refusalProvesKey, type KeyStatus } from './key-status.js';
import { UpstreamAuthenticationError, UpstreamPermissionError } from '../upstream/index.js';

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

/**
 * One operation's guard, handed to every upstream call it makes
 * (`OperationScope.gate`): the upstream client passes each call through
 * `admit` first and reports how it ended.
 */
export class UpstreamGate implements OperationGate {
  /** Calls admitted so far (made, or refused before any I/O by the client's own checks): `extensions.cost`'s actualQueryCost. */
  calls = 0;
  private rejection: Error | null = null;
  /** The key status was told that the upstream took the key (once per operation is enough). */
  private accepted = false;
  /** The probe (the first call of a key not yet seen accepted): the others wait until it has ended. */
  private probe: { ended: Promise<void>; end: () => void } | null = null;
  private readonly maxCalls: number;
  private readonly callerId: string;
  private readonly keys: KeyStatus;

  constructor({ maxCalls, callerId, keys }: GuardOptions) {
    this.maxCalls = maxCalls;
    this.callerId = callerId;
    this.keys = keys;
  }

  async admit(): Promise<boolean> {
    if (this.rejection) throw this.rejection;
    if (this.calls >= this.maxCalls) throw upstreamBudgetExceeded(this.maxCalls);
    this.calls += 1;
    if (this.keys.isKnown(this.callerId)) return false;
    if (!this.probe) {
      let end = () => {};
      const ended = new Promise<void>((resolve) => (end = resolve));
      this.probe = { ended, end };
      return true;
    }
    await this.probe.ended;
    if (this.rejection) throw this.rejection;
    return false;
  }

  succeeded(probe: boolean): void {
    this.accept();
    // Only the probe's end lets the others go: a call admitted while the key was known may end first.
    if (probe) this.probe!.end();
  }

  failed(probe: boolean, error: unknown): void {
    if (error instanceof UpstreamAuthenticationError || error instanceof UpstreamPermissionError) {
      this.rejection ??= error;
      if (error instanceof UpstreamAuthenticationError) this.keys.revoke(this.callerId);
    } else if (refusalProvesKey(error)) {
      // A refusal of the request itself (404, 422...) means the upstream took the key.
      this.accept();
    }
    if (probe) this.probe!.end();
  }

  /**
   * Tells the key status once per operation: its calls answer within moments of each other, and each
   * telling is four lookups in its caches. A later revocation is not undone by it (key-status.ts).
   */
  private accept(): void {
    if (this.accepted) return;
    this.accepted = true;
    this.keys.accept(this.callerId);
  }
}

/** The calls an operation's gate admitted, read off its context (0 without a gate: an anonymous operation makes none). */
export function upstreamCallsOf(context: { upstreamGate?: UpstreamGate | undefined } | undefined): number {
  return context?.upstreamGate?.calls ?? 0;
}
