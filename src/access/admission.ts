/**
 * The one way in: every transport asks here who the caller is and whether it may go on (key, rates,
 * documents, live streams), and keeps only its protocol. See docs/security.md, "One way in".
 */
import { GraphQLError, type DocumentNode, type ValidationRule } from 'graphql';
import type { RedisClient as Redis } from '../redis.js';
import type { FairCache } from '../graphql/fair-cache.js';
import { readCaller, type Caller } from '../auth.js';
import type { Config } from '../config.js';
import { unauthenticated } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PaymentsApi } from '../upstream/index.js';
import { UNGATED, type OperationScope } from '../upstream/index.js';
import type { DocumentCheck } from '../limits/document-check.js';
import type { KeyStatus } from './key-status.js';
import { createRateLimiter } from './rate-limit.js';
import { upstreamCallsOf, type UpstreamGate } from './upstream-budget.js';
import { streamDoor, type DocumentAdmission, type RateRefusal, type StreamOpening, type StreamRequest, type StreamTransport } from './stream-admission.js';

export { capAnswer, overSize, tooLarge } from '../limits/response-size.js';
export type { Caller } from '../auth.js';
export type { DocumentCheck, DocumentLimits } from '../limits/document-check.js';
export { Tally, type DocumentAdmission, type OpenStream, type RateRefusal, type StreamOpening, type StreamRefusal, type StreamRequest, type StreamTransport } from './stream-admission.js';

export type RateLimitName = 'operations' | 'ws_connect' | 'ws_subscribe' | 'sse_subscribe' | 'callback_subscribe';


/** What the streaming transports add to the HTTP document limits: rules Apollo adds for HTTP, fields they never serve. */
export interface StreamDocumentLimits {
  rules: readonly ValidationRule[];
  refusedRootFields: readonly string[];
  /** Shared by graphql-ws and graphql-sse (same schema, same rules). */
  validated: FairCache<string, DocumentNode>;
}

export interface AdmissionDeps {
  config: Readonly<Config>;
  keys: KeyStatus;
  upstream: { forKey(apiKey: string, scope: OperationScope): PaymentsApi };
  logger: Logger;
  documents: DocumentCheck;
  streams: StreamDocumentLimits;
  redis: Redis | null;
  onRateLimited(limit: RateLimitName): void;
}

export interface CostExtension {
  requestedQueryCost: number;
  actualQueryCost: number;
  maximumAvailable: number;
}

export interface Admission {
  readonly keys: KeyStatus;
  readonly documents: DocumentCheck;
  /** Null without a credential; an error for a key that can never work or that the upstream refused moments ago. */
  caller(header: string | undefined): Caller | null | GraphQLError;
  operation(caller: Caller | null, address: string): Promise<RateRefusal | null>;
  connection(address: string): Promise<RateRefusal | null>;
  /** Counts against the address too while the key is not proven. */
  stream(transport: StreamTransport, caller: Caller, address: string): Promise<RateRefusal | null>;
  document(payload: Record<string, unknown>, operationName: string | undefined, variables: Record<string, unknown>, caller: Caller): DocumentAdmission;
  /** `extensions.cost` on a streaming transport, as HTTP's; null when off or not priced. */
  cost(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, context: { upstreamGate?: UpstreamGate | undefined } | undefined): CostExtension | null;
  /** Remembered while the key is proven: it scopes a stream's events. */
  account(caller: Caller): Promise<number>;
  proven(caller: Caller): boolean;
  prove(caller: Caller): Promise<boolean>;
  /** A live stream of the key's: `end` is called once if the key is revoked. Returns the release. */
  live(caller: Caller, end: () => void): () => void;
  /** The one sequence every streaming transport opens through (stream-admission.ts); the transport words a refusal. */
  openStream(request: StreamRequest): Promise<StreamOpening>;
  liveStreams(caller: Caller): number;
  close(): Promise<void>;
}

/** The refusal of a key the upstream revoked lately (a transport may word its own close reason from it). */
export const REVOKED_KEY_MESSAGE = 'The payments API rejected this API key moments ago; check the key before retrying.';

/** Proofs of live keys the gateway makes at once. */
const MAX_PROOFS_IN_FLIGHT = 16;

/** How often live keys are looked at, as a share of KEY_REVALIDATE_MS. */
const PROVE_TICKS_PER_INTERVAL = 4;

export function createAdmission(deps: AdmissionDeps): Admission {
  const { config, keys, logger } = deps;
  const { limits } = config;
  const operations = createRateLimiter({ perMinute: limits.operationsPerMinute, prefix: 'payments-gateway:ops', redis: deps.redis });
  const connects = createRateLimiter({ perMinute: limits.ws.connectsPerMinute, prefix: 'payments-gateway:ws-connect', redis: null });
  const subscribes = {
    ws: createRateLimiter({ perMinute: limits.ws.subscribesPerMinute, prefix: 'payments-gateway:ws-subscribe', redis: null }),
    sse: createRateLimiter({ perMinute: limits.ws.subscribesPerMinute, prefix: 'payments-gateway:sse-subscribe', redis: null }),
    callback: createRateLimiter({ perMinute: limits.ws.subscribesPerMinute, prefix: 'payments-gateway:callback-subscribe', redis: null }),
  };
  const streamLimit: Record<StreamTransport, RateLimitName> = { ws: 'ws_subscribe', sse: 'sse_subscribe', callback: 'callback_subscribe' };
  const unprovenStreams = createRateLimiter({ perMinute: limits.ws.connectsPerMinute, prefix: 'payments-gateway:stream-address', redis: null });

  const refusal = (decision: { allowed: boolean; retryAfterSeconds?: number }, by: RateRefusal['by'], limit: RateLimitName): RateRefusal | null => {
    if (decision.allowed) return null;
    deps.onRateLimited(limit);
    return { retryAfterSeconds: decision.retryAfterSeconds ?? 1, by };
  };

  // The account of each key, remembered while the key stays proven; a failed look-up is forgotten.
  const accounts = new Map<string, Promise<number>>();
  const ACCOUNTS_REMEMBERED = 10_000;
  const learn = <T>(caller: Caller, call: Promise<T>): Promise<T> => keys.heard(caller.callerId, call);

  const live = new Map<string, { caller: Caller; ends: Set<() => void> }>();
  const proving = new Map<string, Promise<boolean>>();
  const stopListening = keys.onRevoked((callerId) => {
    accounts.delete(callerId);
    const entry = live.get(callerId);
    if (!entry) return;
    live.delete(callerId);
    for (const end of entry.ends) end();
  });

  const prove = (caller: Caller): Promise<boolean> => (keys.isProven(caller.callerId) ? Promise.resolve(true) : proveNow(caller));
  const proveNow = (caller: Caller): Promise<boolean> => {
    let pending = proving.get(caller.callerId);
    if (!pending) {
      // The cheapest call of the spec every key may make; its answer is not kept.
      pending = learn(caller, deps.upstream.forKey(caller.apiKey, UNGATED).currencies.list()).then(
        () => true,
        () => false,
      );
      proving.set(caller.callerId, pending);
      void pending.finally(() => proving.delete(caller.callerId));
    }
    return pending;
  };

  // Keys with only live streams are proven here, at the last look before the proof lapses (half a tick
  // of margin), so a revocation nobody saw goes unseen for at most KEY_REVALIDATE_MS.
  const tickMs = Math.max(50, Math.floor(limits.keyRevalidateMs / PROVE_TICKS_PER_INTERVAL));
  const dueWithinMs = tickMs * 1.5;
  const prover = setInterval(() => {
    for (const { caller } of live.values()) {
      // A bounded number at a time: after a restart every live key expires at once; the rest wait a tick.
      if (proving.size >= MAX_PROOFS_IN_FLIGHT) break;
      if (keys.provenFor(caller.callerId) <= dueWithinMs) void proveNow(caller);
    }
  }, tickMs);
  prover.unref();

  const streams = streamDoor({
    isRevoked: (callerId) => keys.isRevoked(callerId),
    maxPerKey: limits.ws.maxSubscriptionsPerKey,
    stream: (transport, caller, address) => self.stream(transport, caller, address),
    document: (payload, operationName, variables, caller) => self.document(payload, operationName, variables, caller),
    account: (caller) => self.account(caller),
    live: (caller, end) => self.live(caller, end),
  });

  const self: Admission = {
    keys,
    documents: deps.documents,

    caller(header) {
      const read = readCaller(header, config.paymentsEnv);
      if (read instanceof GraphQLError || read === null) return read;
      if (keys.isRevoked(read.callerId)) return unauthenticated(REVOKED_KEY_MESSAGE);
      return read;
    },

    async operation(caller, address) {
      const addressKey = `address:${address}`;
      const byKey = await operations.take(caller?.callerId ?? addressKey);
      if (!byKey.allowed) return refusal(byKey, caller ? 'key' : 'address', 'operations');
      // A key the upstream has not accepted lately is anyone's to invent: it spends its address's budget
      // too, so minting fresh keys buys no fresh rate.
      if (caller && !keys.isKnown(caller.callerId)) return refusal(await operations.take(addressKey), 'address', 'operations');
      return null;
    },

    async connection(address) {
      return refusal(await connects.take(address), 'address', 'ws_connect');
    },

    async stream(transport, caller, address) {
      const limit = streamLimit[transport];
      const byKey = refusal(await subscribes[transport].take(caller.callerId), 'key', limit);
      if (byKey || keys.isKnown(caller.callerId)) return byKey;
      return refusal(await unprovenStreams.take(address), 'address', limit);
    },

    document(payload, operationName, variables, caller) {
      const { rules, refusedRootFields, validated } = deps.streams;
      // A key not proven is anyone's to invent: its documents are checked, never remembered.
      const remembered = keys.isKnown(caller.callerId) ? { validated, owner: caller.callerId } : {};
      return deps.documents.admit(payload, operationName, variables, { rules, refusedRootFields, ...remembered });
    },

    cost(document, operationName, variables, context) {
      if (!config.graphql.costExtensions) return null;
      const { cost } = deps.documents.check.price(document, operationName, variables);
      return cost === null ? null : { requestedQueryCost: cost, actualQueryCost: upstreamCallsOf(context), maximumAvailable: limits.maxCost };
    },

    account(caller) {
      let pending = keys.isProven(caller.callerId) ? accounts.get(caller.callerId) : undefined;
      if (!pending) {
        // The connection's own call, not an operation's: no deadline but the upstream time-out.
        pending = learn(caller, deps.upstream.forKey(caller.apiKey, UNGATED).accounts.current()).then((a) => a.id);
        pending.catch(() => accounts.delete(caller.callerId));
        if (accounts.size >= ACCOUNTS_REMEMBERED) accounts.delete(accounts.keys().next().value!);
        accounts.set(caller.callerId, pending);
      }
      return pending;
    },

    proven: (caller) => keys.isProven(caller.callerId),

    prove,

    live(caller, end) {
      let entry = live.get(caller.callerId);
      if (!entry) live.set(caller.callerId, (entry = { caller, ends: new Set() }));
      const ends = entry.ends;
      let ended = false;
      const once = () => {
        if (ended) return;
        ended = true;
        end();
      };
      ends.add(once);
      // Revoked between the look-up and now: end at once.
      if (keys.isRevoked(caller.callerId)) queueMicrotask(() => {
        live.delete(caller.callerId);
        once();
      });
      return () => {
        ends.delete(once);
        if (ends.size === 0 && live.get(caller.callerId)?.ends === ends) live.delete(caller.callerId);
      };
    },

    openStream: (request) => streams.open(request),

    liveStreams: (caller) => streams.liveOf(caller.callerId),

    async close() {
      clearInterval(prover);
      stopListening();
      await keys.close();
      logger.debug('admission closed');
    },
  };
  return self;
}
