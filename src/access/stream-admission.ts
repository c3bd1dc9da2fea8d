/**
 * How every transport opens a live stream: one sequence, one per-key tally, one release, cheapest
 * refusal first; the transport words each refusal in its own protocol.
 */
import { getOperationAST, OperationTypeNode, type DocumentNode, type GraphQLError, type OperationDefinitionNode } from 'graphql';
import type { Caller } from './auth.js';
import type { DocumentAdmission } from '../limits/document-check.js';

/** The transports that open live streams, each with its own per-key pace of new streams. */
export type StreamTransport = 'ws' | 'sse' | 'callback';

export interface RateRefusal {
  retryAfterSeconds: number;
  by: 'key' | 'address';
}

export type { DocumentAdmission } from '../limits/document-check.js';

export interface StreamSteps {
  isRevoked(callerId: string): boolean;
  maxPerKey: number;
  stream(transport: StreamTransport, caller: Caller, address: string): Promise<RateRefusal | null>;
  document(payload: Record<string, unknown>, operationName: string | undefined, variables: Record<string, unknown>, caller: Caller): DocumentAdmission;
  account(caller: Caller): Promise<number>;
  live(caller: Caller, end: () => void): () => void;
}

export interface StreamRequest {
  transport: StreamTransport;
  caller: Caller;
  address: string;
  payload: Record<string, unknown>;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  /** SSE and callbacks carry subscriptions only; graphql-ws runs queries and mutations too. */
  subscriptionsOnly: boolean;
  /** A further slot the transport holds, taken after the per-key cap and given back with it. */
  slot?: { take(): boolean; give(): void };
  accountId?: number;
  /** The client went away: nothing is opened (the slot is given back as soon as it fires). */
  signal?: AbortSignal;
  onRevoked(): void;
}

export type StreamRefusal =
  | { kind: 'revoked' }
  | { kind: 'cap'; limit: number }
  | { kind: 'slot' }
  | { kind: 'rate'; refusal: RateRefusal }
  | { kind: 'document'; errors: GraphQLError[] }
  | { kind: 'not-subscription' }
  | { kind: 'account'; error: unknown }
  | { kind: 'gone' };

export interface OpenStream {
  caller: Caller;
  accountId: number;
  document: DocumentNode;
  /** The operation to run (undefined: graphql-js reports the missing operation when it runs). */
  operation: OperationDefinitionNode | undefined;
  /** Idempotent. */
  release(): void;
}

export type StreamOpening = { stream: OpenStream } | { refused: StreamRefusal };

/** Counts per name, forgetting names that drop to zero (bounded by what is live). */
export class Tally {
  private readonly counts = new Map<string, number>();
  get(name: string): number {
    return this.counts.get(name) ?? 0;
  }
  add(name: string): void {
    this.counts.set(name, this.get(name) + 1);
  }
  remove(name: string): void {
    const left = this.get(name) - 1;
    if (left > 0) this.counts.set(name, left);
    else this.counts.delete(name);
  }
}

export interface StreamDoor {
  open(request: StreamRequest): Promise<StreamOpening>;
  liveOf(callerId: string): number;
}

export function streamDoor(steps: StreamSteps): StreamDoor {
  const liveByKey = new Tally();

  async function open(r: StreamRequest): Promise<StreamOpening> {
    const { caller } = r;
    const { callerId } = caller;
    // The key may have been revoked since the caller was read (a WebSocket reads it once, at connect).
    if (steps.isRevoked(callerId)) return { refused: { kind: 'revoked' } };
    if (r.signal?.aborted) return { refused: { kind: 'gone' } };
    if (liveByKey.get(callerId) >= steps.maxPerKey) return { refused: { kind: 'cap', limit: steps.maxPerKey } };
    if (r.slot && !r.slot.take()) return { refused: { kind: 'slot' } };
    // Reserved before the first await, so a burst cannot pass the caps together.
    liveByKey.add(callerId);
    let released = false;
    let stopLive = () => {};
    const release = () => {
      if (released) return;
      released = true;
      r.signal?.removeEventListener('abort', release);
      stopLive();
      liveByKey.remove(callerId);
      r.slot?.give();
    };
    // The client may leave during the awaits below: its slot comes back then, not when they end.
    r.signal?.addEventListener('abort', release, { once: true });
    const refused = (refusal: StreamRefusal): StreamOpening => {
      release();
      return { refused: refusal };
    };

    // A step that throws gives the reservation back: no transport could release what it never got.
    try {
      // The pace before any parse: a connection flooding documents spends its rate, not the gateway's CPU.
      const limited = await steps.stream(r.transport, caller, r.address);
      if (limited) return refused({ kind: 'rate', refusal: limited });
      if (released) return refused({ kind: 'gone' });
      const admitted = steps.document(r.payload, r.operationName, r.variables, caller);
      if ('errors' in admitted) return refused({ kind: 'document', errors: admitted.errors });
      const operation = getOperationAST(admitted.document, r.operationName) ?? undefined;
      if (r.subscriptionsOnly && operation?.operation !== OperationTypeNode.SUBSCRIPTION) return refused({ kind: 'not-subscription' });
      // The account (an upstream call unless remembered) last, as the costliest step.
      let accountId = r.accountId;
      if (accountId === undefined) {
        try {
          accountId = await steps.account(caller);
        } catch (error) {
          return refused({ kind: 'account', error });
        }
      }
      if (released) return refused({ kind: 'gone' });
      stopLive = steps.live(caller, r.onRevoked);
      return { stream: { caller, accountId, document: admitted.document, operation, release } };
    } catch (error) {
      release();
      throw error;
    }
  }

  return { open, liveOf: (callerId) => liveByKey.get(callerId) };
}
