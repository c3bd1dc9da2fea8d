/**
 * The one way in. Every transport (GraphQL over HTTP and GET, graphql-ws,
 * graphql-sse, the router's subscription traffic over either) asks here, in
 * the same words, who the caller is and whether it may go on:
 * - the caller: one key hash for the whole gateway (auth.ts), the key's
 *   environment, and whether the upstream revoked it (key-status.ts);
 * - rates: operations per key, per address for a key not yet proven or no
 *   key; connection attempts per address; streams opened per key;
 * - documents: trusted documents, then tokens, rules, depth, aliases,
 *   directives, cost and mutation fields (the one check, document-check.ts,
 *   which HTTP enters as Apollo Server's options, `documents` below);
 * - live streams: opened by every streaming transport through one sequence
 *   (`openStream`, stream-admission.ts) with one per-key tally, registered per
 *   key, ended when the key is revoked on any instance, and their keys proven
 *   again within KEY_REVALIDATE_MS when nothing else proves them.
 * A transport file keeps only its protocol: how to read the header, how to
 * refuse, how to close. `.dependency-cruiser.cjs` holds it to this module.
 */
import { GraphQLError, type DocumentNode, type ValidationRule } from 'graphql';
import type { Redis } from 'ioredis';
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

/** The limits the metrics count refusals of. */
export type RateLimitName = 'operations' | 'ws_connect' | 'ws_subscribe' | 'sse_subscribe' | 'callback_subscribe';


/** What the streaming transports add to the HTTP document limits: rules Apollo adds for HTTP, fields they never serve. */
export interface StreamDocumentLimits {
  rules: readonly ValidationRule[];
  refusedRootFields: readonly string[];
  /** Documents that passed before, shared by graphql-ws and graphql-sse (same schema, same rules). */
  validated: FairCache<string, DocumentNode>;
}

export interface AdmissionDeps {
  config: Readonly<Config>;
  keys: KeyStatus;
  upstream: { forKey(apiKey: string, scope: OperationScope): PaymentsApi };
  logger: Logger;
  /** The one document check, HTTP's too (limits/document-check.ts). */
  documents: DocumentCheck;
  streams: StreamDocumentLimits;
  /** Shares the operation rate between instances; null: in memory. */
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
  /**
   * The caller a credential header names: null without one; an error (UNAUTHENTICATED, FORBIDDEN with its
   * HTTP status) for a key that can never work here or that the upstream refused moments ago.
   */
  caller(header: string | undefined): Caller | null | GraphQLError;
  /** One operation over HTTP: the key's rate, and its address's too when the key is not yet proven (or absent). */
  operation(caller: Caller | null, address: string): Promise<RateRefusal | null>;
  /** One WebSocket connection attempt from an address. */
  connection(address: string): Promise<RateRefusal | null>;
  /** One subscription opened by a key (graphql-ws subscribe message, SSE stream, or router callback), and by its address when not yet proven. */
  stream(transport: StreamTransport, caller: Caller, address: string): Promise<RateRefusal | null>;
  /** A streaming transport's document: trusted documents, then every document limit, before anything runs. */
  document(payload: Record<string, unknown>, operationName: string | undefined, variables: Record<string, unknown>, caller: Caller): DocumentAdmission;
  /**
   * `extensions.cost` of a query's or mutation's answer on a streaming transport, as HTTP's (COST_EXTENSIONS):
   * the estimate (remembered from admission), the upstream calls the operation's gate let through (its context), the limit.
   * Null when off or not priced.
   */
  cost(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, context: { upstreamGate?: UpstreamGate | undefined } | undefined): CostExtension | null;
  /** The account behind the key (asked upstream, remembered while the key is proven): it scopes a stream's events. */
  account(caller: Caller): Promise<number>;
  /** Accepted by the upstream within KEY_REVALIDATE_MS. */
  proven(caller: Caller): boolean;
  /** A call that proves the key now, when it is not proven yet: true when the upstream accepted it. */
  prove(caller: Caller): Promise<boolean>;
  /** A live stream of the key's: `end` is called once if the key is revoked. Returns the release. */
  live(caller: Caller, end: () => void): () => void;
  /**
   * A live stream opened, the one sequence of every streaming transport (stream-admission.ts): revoked,
   * the per-key cap (one tally for all transports), the stream rate, the document, the account, the
   * live-stream registration. A refusal names its step; the transport words it.
   */
  openStream(request: StreamRequest): Promise<StreamOpening>;
  /** Live streams of a key on this instance, every transport together. */
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
  // What the door's own reads say of the key is learned like any call's (key-status.ts `keyVerdict`).
  const learn = <T>(caller: Caller, call: Promise<T>): Promise<T> => keys.heard(caller.callerId, call);

  // Live streams by key, and the proofs under way.
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

  // A key with live streams and no other traffic is proven here: a revocation nobody saw ends its streams.
  // It is proven again while still proven, at the last look before its proof lapses, so a revocation goes
  // unseen for at most KEY_REVALIDATE_MS (and the proof's call), not a further tick after the lapse.
  // Half a tick of margin: a look that finds a proof just over one tick from lapsing must not skip it.
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

  // The one sequence every streaming transport opens a stream through, over the steps below.
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
      // A key not proven is anyone's to invent: its documents are checked, never remembered; a known key's are its own share.
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
