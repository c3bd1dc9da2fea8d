/**
 * The last guards between one operation and the upstream: a budget of calls (large answers priced by their bytes), no more calls after a 401 or 403,
 * and one probe call first for a key not known, so a refused key costs one call, not a fan-out.
 * A 403 is not remembered across operations: it may concern one route only.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';
import type { CallOutcome, OperationGate } from '../upstream/index.js';
import type { CallerRecord } from './caller.js';
import { keyVerdict, type KeyStatus } from './key-status.js';

/** Each MiB of an answer past its first counts as one more call: a 100 MB page pays 100 of the budget, not 1 (docs/security.md). */
export const BYTES_PER_CALL = 1024 * 1024;

function upstreamBudgetExceeded(limit: number): GraphQLError {
  return new GraphQLError(`This operation reached its budget of ${limit} upstream calls (an answer counts one per MiB); this field was not read.`, {
    extensions: { code: ErrorCode.UPSTREAM_BUDGET_EXCEEDED, limit },
  });
}

type Report = (outcome: CallOutcome) => void;

/** One operation's guard: it acts on the caller as admitted; the one news it heeds after the door is a revocation. */
export class UpstreamGate implements OperationGate {
  /** `extensions.cost`'s actualQueryCost: calls admitted, including those the client refused before any I/O. */
  calls = 0;
  private rejection: Error | null = null;
  private proven = false;
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

  /** An answer is told once per operation: its calls answer within moments of each other, and each telling costs cache lookups. */
  private hear(outcome: CallOutcome): void {
    // Known only once answered: the calls after a large page pay for it, the page itself was admitted as one.
    if (outcome.ok && outcome.bytes !== undefined) this.calls += Math.max(0, Math.ceil(outcome.bytes / BYTES_PER_CALL) - 1);
    const verdict = keyVerdict(outcome);
    if (verdict === 'revoked' || verdict === 'refused') this.rejection ??= (outcome as { error: Error }).error;
    if (verdict === 'proven' && this.proven) return;
    this.proven ||= verdict === 'proven';
    this.keys.learn(this.caller.callerId, verdict);
  }
}

export function upstreamCallsOf(context: { upstreamGate?: UpstreamGate | undefined } | undefined): number {
  return context?.upstreamGate?.calls ?? 0;
}
