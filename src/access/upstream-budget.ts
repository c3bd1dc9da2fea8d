/**
 * The last guards between one operation and the upstream, whatever got past
 * the cost limit:
 * - a budget of upstream calls per operation (a field over it fails with
 *   UPSTREAM_BUDGET_EXCEEDED, the rest of the answer stands);
 * - short-circuit on rejection: once the upstream says 401 or 403 for this
 *   key, the operation's remaining calls fail at once without being made;
 * - a key not known when the operation was admitted (caller.ts) sends one
 *   call first; the operation's other calls wait for its answer, so a refused
 *   key costs one call, not a fan-out;
 * - what the upstream says of the key is learned by `KeyStatus.learn`
 *   (key-status.ts, `keyVerdict`): a 401 revokes it everywhere, any answer
 *   from behind the key check proves it.
 * A 403 is not remembered across operations: it may concern one route only.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';
import type { CallOutcome, OperationGate } from '../upstream/index.js';
import type { CallerRecord } from './caller.js';
import { keyVerdict, type KeyStatus } from './key-status.js';

function upstreamBudgetExceeded(limit: number): GraphQLError {
  return new GraphQLError(`This operation reached its budget of ${limit} upstream calls; this field was not read.`, {
    extensions: { code: ErrorCode.UPSTREAM_BUDGET_EXCEEDED, limit },
  });
}

type Report = (outcome: CallOutcome) => void;

/**
 * One operation's guard, handed to every upstream call it makes
 * (`OperationScope.gate`): the upstream client passes each call through
 * `admit` first and reports how it ended to what `admit` returned.
 * It acts on the caller as admitted (`CallerRecord`); the one news it heeds after the door is a revocation.
 */
export class UpstreamGate implements OperationGate {
  /** Calls admitted so far (made, or refused before any I/O by the client's own checks): `extensions.cost`'s actualQueryCost. */
  calls = 0;
  private rejection: Error | null = null;
  /** The key status was told that the upstream took the key (once per operation is enough). */
  private proven = false;
  /** The probe (the first call of a key not yet known): the others wait until it has ended. */
  private probe: { ended: Promise<void>; end: () => void } | null = null;
  private readonly report: Report = (outcome) => this.hear(outcome);
  // Only the probe's end lets the others go: a call admitted while the key was known may end first.
  private readonly reportProbe: Report = (outcome) => {
    this.hear(outcome);
    this.probe!.end();
  };

  constructor(
    private readonly caller: CallerRecord,
    private readonly keys: Pick<KeyStatus, 'learn' | 'isKnown'>,
  ) {}

  async admit(): Promise<Report> {
    if (this.rejection) throw this.rejection;
    if (this.calls >= this.caller.maxUpstreamCalls) throw upstreamBudgetExceeded(this.caller.maxUpstreamCalls);
    this.calls += 1;
    // Known at the door and not revoked since (on any instance): no probe. A revocation heard mid-operation
    // outranks the record, so the next call probes the key again instead of fanning out.
    if (this.caller.known && this.keys.isKnown(this.caller.callerId)) return this.report;
    if (!this.probe) {
      let end = () => {};
      const ended = new Promise<void>((resolve) => (end = resolve));
      this.probe = { ended, end };
      return this.reportProbe;
    }
    await this.probe.ended;
    if (this.rejection) throw this.rejection;
    return this.report;
  }

  /**
   * What the call says of the key is learned by the key status (`keyVerdict`); a refused key fails the operation's
   * remaining calls. An answer is told once per operation: its calls answer within moments of each other, and each
   * telling is four lookups in its caches. A later revocation is not undone by it (key-status.ts).
   */
  private hear(outcome: CallOutcome): void {
    const verdict = keyVerdict(outcome);
    if (verdict === 'revoked' || verdict === 'refused') this.rejection ??= (outcome as { error: Error }).error;
    if (verdict === 'proven' && this.proven) return;
    this.proven ||= verdict === 'proven';
    this.keys.learn(this.caller.callerId, verdict);
  }
}

/** The calls an operation's gate admitted, read off its context (0 without a gate: an anonymous operation makes none). */
export function upstreamCallsOf(context: { upstreamGate?: UpstreamGate | undefined } | undefined): number {
  return context?.upstreamGate?.calls ?? 0;
}
