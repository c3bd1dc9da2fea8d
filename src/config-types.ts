/**
 * The shape of the validated configuration (config.ts builds it from the
 * environment): what each setting means, apart from how it is parsed.
 */
import type { ByteBudgetOptions } from './upstream/index.js';
import type { ResilienceOptions } from './upstream/index.js';
import { HTTP_CLIENTS, MAX_RESPONSE_BYTES, type HttpClientName } from './upstream/index.js';

/** Default of UPSTREAM_MAX_RESPONSE_BYTES (transport.ts: above the largest page the emulator answers); at most MAX_UPSTREAM_RESPONSE_BYTES, below V8's string limit. */
export const UPSTREAM_RESPONSE_BYTES = MAX_RESPONSE_BYTES;
export const MAX_UPSTREAM_RESPONSE_BYTES = 256 * 1024 * 1024;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** What a browser gets at GET /graphql: the bundled GraphiQL, Apollo Sandbox (from Apollo's CDN), or nothing. */
export const EXPLORERS = ['graphiql', 'sandbox', 'off'] as const;

/** What sends the upstream requests (src/upstream/transport.ts): got, the default, or bare node:http. */
export const UPSTREAM_HTTP_CLIENTS = HTTP_CLIENTS;

export interface Config {
  port: number;
  host: string;
  /** Null: start the embedded emulator and use it. */
  paymentsApiUrl: string | null;
  paymentsEnv: 'sandbox' | 'live';
  webhookSecrets: readonly string[];
  /** A webhook body longer than this is refused 413 before any signature work. */
  webhookMaxBodyBytes: number;
  redisUrl: string | null;
  logLevel: (typeof LOG_LEVELS)[number];
  upstreamTimeoutMs: number;
  /** got (the default) or node: the upstream client's transport; same contract, different CPU cost (bench/README.md). */
  upstreamHttpClient: HttpClientName;
  /** An upstream answer longer than this many bytes is refused unread past it (UPSTREAM_ERROR, not retried); either transport. */
  upstreamMaxResponseBytes: number;
  /** Upstream answer bytes read and not yet decoded, all keys together and per key (UPSTREAM_BYTES_IN_FLIGHT*). */
  upstreamBytesInFlight: Readonly<ByteBudgetOptions>;
  currencyCacheTtlMs: number;
  /**
   * Upstream objects kept across requests (src/cache): in Redis when
   * REDIS_URL is set, else in memory (at most maxObjects, and maxBytes of
   * estimated size). An object over maxEntryBytes is not kept, in either
   * store. A TTL of 0 keeps that kind out of the cache. `decodedItems`: upstream items remembered with
   * what they decoded to, so an unchanged object is validated once (0 with the cache off).
   */
  entityCache: { enabled: boolean; maxObjects: number; maxBytes: number; maxEntryBytes: number; customerTtlMs: number; finalTtlMs: number; decodedItems: number };
  pagination: { defaultFirst: number; maxFirst: number };
  /** Per subscription: events queued for a client that does not keep up, before it is disconnected. */
  subscriptionQueueLimit: number;
  /** Per connection: unsent bytes beyond which the client counts as not keeping up. */
  subscriptionMaxBufferedBytes: number;
  /** Whole-operation budget: upstream calls and retries of one GraphQL operation stop at it. */
  operationDeadlineMs: number;
  /** Retries, retry budget, circuit breakers and per-route concurrency of the upstream client. */
  upstreamResilience: ResilienceOptions;
  /**
   * Keyed mutations' records: retention, wait and lock; a result over recordMaxBytes (after the input it
   * echoes) is not kept; the memory store's bounds per caller and in all; what a Redis store without
   * append-only persistence gets at start (refused, or a warning).
   */
  idempotency: {
    ttlMs: number;
    waitMs: number;
    lockMs: number;
    recordMaxBytes: number;
    callerMaxBytes: number;
    maxBytes: number;
    redisPersistence: 'require' | 'warn';
  };
  /** SIGTERM: /readyz answers 503 for readinessDelayMs, then in-flight work gets graceMs to finish. */
  shutdown: { graceMs: number; readinessDelayMs: number };
  /** NODE_ENV=production or PAYMENTS_ENV=live: safe defaults for the public internet (docs/security.md). */
  production: boolean;
  /** Start the emulator when PAYMENTS_API_URL is unset (always outside production; an explicit opt-in in it). */
  embeddedEmulator: boolean;
  graphql: {
    introspection: boolean;
    /** "Did you mean …" in validation errors. */
    suggestions: boolean;
    /** Inline traces (ftv1) only for requests carrying this secret in `x-router-secret`; null: any caller outside production. */
    routerSharedSecret: string | null;
    /** `extensions.cost` on answers: requested and actual cost, and the maximum. */
    costExtensions: boolean;
    /** Queries run by graphql-jit, compiled once per document; false: graphql-js runs everything. */
    jit: boolean;
    /**
     * The caches of what callers send, in estimated bytes of heap: compiled queries (graphql-jit), parsed and
     * validated documents (each store: Apollo's for HTTP, one for WebSocket and SSE); and the part of each one
     * caller's entries may hold (docs/security.md).
     */
    caches: { jitBytes: number; documentBytes: number; callerShare: number };
    /** Where to push the objects that changed, and the router's shared key (sent as the whole Authorization header); null: nowhere. */
    routerInvalidation: { url: string; key: string } | null;
    /**
     * Subscriptions over the router's HTTP callback protocol (src/http/subscription-callback.ts): the callback
     * URLs the gateway may POST to, as origins or URL prefixes (empty: the protocol is off), and the time-out of
     * each of those POSTs, and how many may be live on this instance at once.
     */
    subscriptionCallbacks: { allowed: readonly string[]; timeoutMs: number; max: number };
  };
  limits: Limits;
  /** A persisted-documents manifest: when set, only its operations run (docs/security.md). */
  trustedDocumentsPath: string | null;
  /** Default graphiql, or off in production. */
  explorer: (typeof EXPLORERS)[number];
  observability: ObservabilityConfig;
  /**
   * The bearer token of the operational detail on the public port (`/metrics`,
   * breaker states, counts); null: open outside production, closed in it.
   */
  opsToken: string | null;
  /** Re-reading objects that subscriptions wait on, for when webhooks do not come (docs/realtime.md). */
  reconcile: ReconcileSettings;
}

export interface ReconcileSettings {
  /** Wait before the first re-read, and again after any change of the object. */
  initialMs: number;
  /** The wait doubles after each quiet re-read up to this cap: the longest a missed change can go unseen. */
  maxMs: number;
  /** Each wait is shortened by up to this share at random, so objects watched together do not re-read together. */
  jitter: number;
  /** Upstream re-reads per second on one instance, across every object; 0 turns reconciliation off. */
  readsPerSecond: number;
}

/** Metrics, traces and Apollo reporting (docs/operations.md). */
export interface ObservabilityConfig {
  /** Prometheus text at `/metrics`: on the main port, or on `port` alone when it is set. */
  metrics: { enabled: boolean; port: number | null; host: string };
  /** OTLP/HTTP (JSON) traces; null unless asked for by the OTEL_* variables. */
  tracing: { url: string; serviceName: string } | null;
  /** Apollo GraphOS: the key and graph, and whether this server reports usage itself (no router in front). */
  apollo: { key: string; graphRef: string | null; usageReporting: boolean } | null;
}

/** Abuse limits, each documented in docs/security.md with its variable. */
export interface Limits {
  maxCost: number;
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxAnonymousBodyBytes: number;
  maxHttpConnections: number;
  /** Open HTTP connections per socket peer; trusted proxies are exempt (src/http/connections.ts). */
  maxHttpConnectionsPerAddress: number;
  maxDirectives: number;
  maxMutationFields: number;
  maxUpstreamCalls: number;
  maxResponseBytes: number;
  maxLogTextChars: number;
  rejectedKeyTtlMs: number;
  /**
   * How long a key the upstream accepted counts as good without asking again: past it, the entity cache does
   * not serve the key until an upstream call proves it, and a key with live streams is proven by the gateway.
   */
  keyRevalidateMs: number;
  /** Operations per API key per minute; 0 turns the limit off. */
  operationsPerMinute: number;
  /** Proxies trusted to say who the client is (X-Forwarded-For); none by default, so the socket's peer is the client. */
  trustedProxies: readonly string[];
  ws: {
    maxConnectionsPerKey: number;
    maxConnectionsPerAddress: number;
    maxConnections: number;
    maxSubscriptionsPerKey: number;
    subscribesPerMinute: number;
    /** Connection attempts per client address per minute (each may cost an account look-up). */
    connectsPerMinute: number;
  };
}
