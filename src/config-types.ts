/** The validated configuration's shape: what each setting means (docs/configuration.md), apart from its parsing. */
import type { RedisTarget } from './redis-target.js';
import type { ByteBudgetOptions } from './upstream/index.js';
import type { ResilienceOptions } from './upstream/index.js';
import { HTTP_CLIENTS, MAX_RESPONSE_BYTES, type HttpClientName } from './upstream/index.js';

/** Default above the largest page the emulator answers; the maximum stays below V8's string limit. */
export const UPSTREAM_RESPONSE_BYTES = MAX_RESPONSE_BYTES;
export const MAX_UPSTREAM_RESPONSE_BYTES = 256 * 1024 * 1024;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const EXPLORERS = ['graphiql', 'sandbox', 'off'] as const;

export const UPSTREAM_HTTP_CLIENTS = HTTP_CLIENTS;

export interface Config {
  port: number;
  host: string;
  /** Null: the embedded emulator. */
  paymentsApiUrl: string | null;
  paymentsEnv: 'sandbox' | 'live';
  webhookSecrets: readonly string[];
  /** Refused 413 before any signature work. */
  webhookMaxBodyBytes: number;
  /** Null: no shared state, one instance. */
  redis: RedisTarget | null;
  logLevel: (typeof LOG_LEVELS)[number];
  upstreamTimeoutMs: number;
  upstreamHttpClient: HttpClientName;
  upstreamMaxResponseBytes: number;
  upstreamBytesInFlight: Readonly<ByteBudgetOptions>;
  currencyCacheTtlMs: number;
  /** A TTL of 0 keeps that kind out; `decodedItems`: items remembered with what they decoded to (validated once). */
  entityCache: { enabled: boolean; maxObjects: number; maxBytes: number; maxEntryBytes: number; customerTtlMs: number; finalTtlMs: number; pendingMaxAgeMs: number; decodedItems: number };
  pagination: { defaultFirst: number; maxFirst: number };
  subscriptionQueueLimit: number;
  subscriptionMaxBufferedBytes: number;
  operationDeadlineMs: number;
  upstreamResilience: ResilienceOptions;
  /** `recordMaxBytes`: a larger result is not kept; `redisPersistence`: a Redis without append-only at start. */
  idempotency: {
    ttlMs: number;
    waitMs: number;
    lockMs: number;
    recordMaxBytes: number;
    callerMaxBytes: number;
    maxBytes: number;
    redisPersistence: 'require' | 'warn';
    quarantineMs: number;
  };
  /** Absolute: the idempotency records and the webhook ledger of a gateway without REDIS_URL (`DATA_DIR`), one process's. */
  dataDir: string;
  /** DATA_DIR was given: a folder another gateway holds refuses the start even outside production. */
  dataDirSet: boolean;
  /** Without REDIS_URL, the webhook ledger on disk (`WEBHOOK_LEDGER_MAX_BYTES`, `WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES`). */
  webhookLedger: { maxBytes: number; accountMaxBytes: number };
  shutdown: { graceMs: number; readinessDelayMs: number };
  production: boolean;
  embeddedEmulator: boolean;
  graphql: {
    introspection: boolean;
    suggestions: boolean;
    /** Inline traces only for requests carrying this secret; null: any caller outside production. */
    routerSharedSecret: string | null;
    costExtensions: boolean;
    jit: boolean;
    /** Estimated heap bytes of compiled queries and parsed documents; `callerShare`: what one caller's entries may hold. */
    caches: { jitBytes: number; documentBytes: number; callerShare: number };
    /** `key` is sent as the whole Authorization header; null: push nowhere. */
    routerInvalidation: { url: string; key: string } | null;
    /** The callback URLs the gateway may POST to (origins or prefixes; empty: off). */
    subscriptionCallbacks: { allowed: readonly string[]; timeoutMs: number; max: number };
  };
  limits: Limits;
  trustedDocumentsPath: string | null;
  explorer: (typeof EXPLORERS)[number];
  observability: ObservabilityConfig;
  /** Guards `/metrics` and operational detail on the public port; null: open outside production, closed in it. */
  opsToken: string | null;
  /** With REDIS_URL: the event log keeps about this many events, all accounts together (docs/realtime.md). */
  eventLogMaxEvents: number;
  reconcile: ReconcileSettings;
}

export interface ReconcileSettings {
  initialMs: number;
  /** The longest a missed change can go unseen. */
  maxMs: number;
  /** Shortens each wait at random, so objects watched together do not re-read together. */
  jitter: number;
  /** 0 turns reconciliation off. */
  readsPerSecond: number;
}

export interface ObservabilityConfig {
  metrics: { enabled: boolean; port: number | null; host: string };
  tracing: { url: string; serviceName: string } | null;
  /** `usageReporting`: this server reports usage itself (no router in front). */
  apollo: { key: string; graphRef: string | null; usageReporting: boolean } | null;
}

export interface Limits {
  maxCost: number;
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxAnonymousBodyBytes: number;
  maxHttpConnections: number;
  /** Trusted proxies are exempt. */
  maxHttpConnectionsPerAddress: number;
  maxDirectives: number;
  maxMutationFields: number;
  maxUpstreamCalls: number;
  maxResponseBytes: number;
  maxLogTextChars: number;
  rejectedKeyTtlMs: number;
  /** Past it the entity cache does not serve the key until an upstream call proves it again. */
  keyRevalidateMs: number;
  /** 0 turns the limit off. */
  operationsPerMinute: number;
  /** None by default, so the socket's peer is the client. */
  trustedProxies: readonly string[];
  ws: {
    maxConnectionsPerKey: number;
    maxConnectionsPerAddress: number;
    maxConnections: number;
    maxSubscriptionsPerKey: number;
    subscribesPerMinute: number;
    connectsPerMinute: number;
  };
}
