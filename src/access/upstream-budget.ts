/**
 * The last guards between one operation and the upstream: a budget of calls (large answers priced by their bytes), no more calls after a 401 or 403,
 * and one probe call first for a key not known, so a refused key costs one call, not a fan-out.
 * A 403 is not remembered across operations: it may concern one route only. The gate wraps the client the
 * context hands out (`gatedApi`); the client itself holds no policy.
 */
import { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors.js';
import { API_VERBS, type PaymentsApi } from '../upstream/index.js';
import type { CallerRecord } from './caller.js';
import { ANSWERED, keyVerdict, type CallOutcome, type KeyStatus } from './key-status.js';

/** Each MiB of an answer past its first counts as one more call: a 100 MB page pays 100 of the budget, not 1 (docs/security.md). */
export const BYTES_PER_CALL = 1024 * 1024;

function upstreamBudgetExceeded(limit: number): GraphQLError {
  return new GraphQLError(`This operation reached its budget of ${limit} upstream calls (an answer counts one per MiB); this field was not read.`, {
    extensions: { code: ErrorCode.UPSTREAM_BUDGET_EXCEEDED, limit },
  });
}

type Report = (outcome: CallOutcome) => void;

/** What a client wrapped by `gatedApi` passes before each call. */
export type CallGate = Pick<UpstreamGate, 'admit'>;

/** One operation's guard: it acts on the caller as admitted; the one news it heeds after the door is a revocation. */
export class UpstreamGate {
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

  /** Throws to refuse, pends to hold back; the report returned hears once how the call ended. */
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
   * The client tells each large answer's size once decoded (the scope's `onLargeAnswer`): known only then, so the
   * calls after a large page pay for it; the page itself was admitted as one.
   */
  readonly priceAnswer = (chars: number): void => {
    this.calls += Math.max(0, Math.ceil(chars / BYTES_PER_CALL) - 1);
  };

  /** An answer is told once per operation: its calls answer within moments of each other, and each telling costs cache lookups. */
  private hear(outcome: CallOutcome): void {
    const verdict = keyVerdict(outcome);
    if (verdict === 'revoked' || verdict === 'refused') this.rejection ??= (outcome as { error: Error }).error;
    if (verdict === 'proven' && this.proven) return;
    this.proven ||= verdict === 'proven';
    this.keys.learn(this.caller.callerId, verdict);
  }
}

type Verbs = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** Made once for every operation: each verb reads the gate and the client's own view off the view it is read from. */
interface GatedView {
  readonly inner: Verbs;
  readonly gate: CallGate;
}

/** A verb is a method, never a closure made per operation. The gate hears how each call ended, decoding included. */
const GATED_PROTOTYPES: Record<string, Verbs> = Object.fromEntries(
  Object.entries(API_VERBS).map(([resource, verbs]) => {
    const proto: Verbs = {};
    for (const verb of verbs) {
      proto[verb] = async function (this: GatedView, ...args: unknown[]) {
        const report = await this.gate.admit();
        try {
          const answer = await this.inner[verb]!(...args);
          report(ANSWERED);
          return answer;
        } catch (error) {
          report({ ok: false, error });
          throw error;
        }
      };
    }
    return [resource, proto];
  }),
);

/** A resource is wrapped on first use, so an operation pays only for the resources it reads. */
class GatedApi {
  readonly #views = new Map<string, GatedView>();
  constructor(
    readonly api: PaymentsApi,
    readonly gate: CallGate,
  ) {}

  static {
    for (const resource of Object.keys(GATED_PROTOTYPES)) {
      Object.defineProperty(GatedApi.prototype, resource, {
        get(this: GatedApi) {
          let view = this.#views.get(resource);
          if (view === undefined) {
            const inner = (this.api as unknown as Record<string, Verbs>)[resource]!;
            view = Object.assign(Object.create(GATED_PROTOTYPES[resource]!) as object, { inner, gate: this.gate }) as GatedView;
            this.#views.set(resource, view);
          }
          return view;
        },
        enumerable: true,
      });
    }
  }
}

/** `api` as one operation may use it: every call passes `gate` first. */
export function gatedApi(api: PaymentsApi, gate: CallGate): PaymentsApi {
  return new GatedApi(api, gate) as unknown as PaymentsApi;
}
