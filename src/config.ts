/** Environment -> one validated, frozen config; every problem is reported at once, so a bad deployment is fixed in one go. */
import path from 'node:path';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { lookalikeMessage, lookalikes } from './config-lookalikes.js';
import { decimal, flag, list, milliseconds, oneOf, optional, port, secret, shown, url, wholeNumber } from './config-fields.js';
import { DEFAULT_BYTE_BUDGET } from './upstream/index.js';
import { redisTarget, redisTargetProblems, type RedisEnv } from './redis-target.js';
import { EXPLORERS, LOG_LEVELS, MAX_UPSTREAM_RESPONSE_BYTES, UPSTREAM_HTTP_CLIENTS, UPSTREAM_RESPONSE_BYTES, type Config, type ObservabilityConfig } from './config-types.js';

export type { Config, Limits, ObservabilityConfig, ReconcileSettings } from './config-types.js';

const proxyList = (value: string | undefined): readonly string[] =>
  Object.freeze((value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== ''));
function validProxy(entry: string): boolean {
  try {
    proxyaddr.compile([entry]);
    return true;
  } catch {
    return false;
  }
}
/** Each entry parsed and ending in "/": `http://router:4000/callback` admits `/callback/<id>`, never `/callbacks` or `:40001`. */
function callbackEntries(value: string | undefined): string[] {
  return (value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');
}
function callbackList(value: string | undefined): string[] {
  return callbackEntries(value).map((v) => {
    const url = new URL(v);
    return url.href.endsWith('/') ? url.href : `${url.href}/`;
  });
}
function validCallback(v: string): boolean {
  if (!URL.canParse(v)) return false;
  const url = new URL(v);
  return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search && !url.hash && !v.includes('#');
}

/** A cross-field rule's message, with the values it compared (numbers: never a secret). */
const given =
  (rule: string, ...names: string[]) =>
  (issue: { input?: unknown }): string => {
    const env = (issue.input ?? {}) as Record<string, unknown>;
    return `${rule}, got ${names.map((n) => `${n}=${String(env[n])}`).join(', ')}`;
  };

/** A cross-field rule runs even when other fields failed, but not over a field already named as bad. */
const validFields =
  (...names: string[]) =>
  (payload: { issues: readonly { path?: readonly PropertyKey[] }[] }): boolean =>
    !payload.issues.some((issue) => names.includes(String(issue.path?.[0])));

const MIN_LIVE_SECRET = 16;
const secretList = (value: string | undefined): string[] => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
/** The first webhook secret too short for live, by its place and length only. */
function shortSecret(value: string | undefined): { place: number; count: number; length: number } | null {
  const secrets = secretList(value);
  const place = secrets.findIndex((s) => s.length < MIN_LIVE_SECRET);
  return place === -1 ? null : { place: place + 1, count: secrets.length, length: secrets[place]!.length };
}

const int = (min: number, max?: number) => optional(wholeNumber(min, max));
const num = (min: number, max?: number) => optional(decimal(min, max));
const ms = optional(milliseconds);
const web = url(['http', 'https']);
const OTLP_JSON = oneOf(['http/json'], ' (OTLP over HTTP, JSON encoded: the only protocol supported)');

const envSchema = z
  .object({
    PORT: optional(port).default(4000),
    HOST: optional(z.string()),
    PAYMENTS_API_URL: optional(web),
    PAYMENTS_ENV: optional(oneOf(['sandbox', 'live'])).default('sandbox'),
    WEBHOOK_SECRETS: optional(z.string()),
    WEBHOOK_MAX_BODY_BYTES: int(1024).default(256 * 1024),
    REDIS_URL: optional(url(['redis', 'rediss'])),
    REDIS_CLUSTER_NODES: optional(z.string()),
    REDIS_SENTINELS: optional(z.string()),
    REDIS_SENTINEL_MASTER: optional(z.string()),
    REDIS_USERNAME: optional(z.string()),
    REDIS_PASSWORD: optional(z.string()),
    REDIS_TLS: optional(flag),
    REDIS_CONNECT_TIMEOUT_MS: ms,
    REDIS_REPLICA_ACKS: int(0, 16),
    REDIS_REPLICA_ACK_TIMEOUT_MS: ms,
    LOG_LEVEL: optional(oneOf(LOG_LEVELS)).default('info'),
    UPSTREAM_TIMEOUT_MS: ms.default(10_000),
    UPSTREAM_HTTP_CLIENT: optional(oneOf(UPSTREAM_HTTP_CLIENTS)).default('got'),
    UPSTREAM_MAX_RESPONSE_BYTES: int(1024, MAX_UPSTREAM_RESPONSE_BYTES).default(UPSTREAM_RESPONSE_BYTES),
    UPSTREAM_BYTES_IN_FLIGHT: int(1024).default(DEFAULT_BYTE_BUDGET.totalBytes),
    UPSTREAM_BYTES_IN_FLIGHT_PER_KEY: int(1024).default(DEFAULT_BYTE_BUDGET.perKeyBytes),
    CURRENCY_CACHE_TTL_MS: int(0).default(60_000),
    ENTITY_CACHE: optional(flag).default(true),
    ENTITY_CACHE_MAX_OBJECTS: int(1).default(50_000),
    ENTITY_CACHE_MAX_BYTES: int(1024).default(64 * 1024 * 1024),
    ENTITY_CACHE_MAX_ENTRY_BYTES: int(256).default(256 * 1024),
    CUSTOMER_CACHE_TTL_MS: int(0).default(60_000),
    FINAL_OBJECT_CACHE_TTL_MS: int(0).default(60 * 60 * 1000),
    // A change whose webhook was lost stays unseen this long at most: a few polls of a checkout page (docs/performance.md).
    PENDING_OBJECT_MAX_AGE_MS: int(0, 60_000).default(5_000),
    MAX_PAGE_SIZE: int(1, 100).default(100),
    DEFAULT_PAGE_SIZE: int(1, 100).default(20),
    SUBSCRIPTION_QUEUE_LIMIT: int(1, 100_000).default(256),
    SUBSCRIPTION_MAX_BUFFERED_BYTES: int(1024).default(4 * 1024 * 1024),
    OPERATION_DEADLINE_MS: ms.default(15_000),
    UPSTREAM_MAX_ATTEMPTS: int(1, 10).default(3),
    UPSTREAM_RETRY_BASE_MS: int(0).default(50),
    UPSTREAM_RETRY_MAX_DELAY_MS: int(0).default(1_000),
    UPSTREAM_MAX_RETRY_AFTER_MS: int(0).default(2_000),
    UPSTREAM_RETRY_BUDGET_RATIO: num(0, 1).default(0.2),
    UPSTREAM_ROUTE_CONCURRENCY: int(1).default(64),
    UPSTREAM_ROUTE_QUEUE_LIMIT: int(0).default(1_024),
    BREAKER_ERROR_PERCENT: int(1, 100).default(50),
    BREAKER_VOLUME_THRESHOLD: int(1).default(20),
    BREAKER_WINDOW_MS: ms.default(10_000),
    BREAKER_RESET_MS: ms.default(10_000),
    BREAKER_MIN_KEYS: int(1).default(3),
    BREAKER_KEY_SHARE: num(0, 1).default(0.5),
    IDEMPOTENCY_TTL_MS: ms.default(24 * 60 * 60 * 1000),
    IDEMPOTENCY_WAIT_MS: int(0).default(5_000),
    IDEMPOTENCY_MAX_BYTES: int(64 * 1024).default(256 * 1024 * 1024),
    IDEMPOTENCY_CALLER_MAX_BYTES: int(4 * 1024).default(8 * 1024 * 1024),
    IDEMPOTENCY_RECORD_MAX_BYTES: int(1024).default(1024 * 1024),
    IDEMPOTENCY_REDIS_PERSISTENCE: optional(oneOf(['require', 'warn'])),
    IDEMPOTENCY_QUARANTINE_MS: int(0).default(15 * 60 * 1000),
    // Where a gateway without REDIS_URL keeps what must outlive it; relative to the working directory.
    DATA_DIR: optional(z.string().trim().min(1).refine((v) => !v.includes('\0'), 'expected a folder path')).default('data'),
    // About 1,250 bytes a delivery: 128 MiB holds a day of about 100,000 (docs/configuration.md).
    WEBHOOK_LEDGER_MAX_BYTES: int(64 * 1024).default(128 * 1024 * 1024),
    WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES: int(4 * 1024).default(64 * 1024 * 1024),
    SHUTDOWN_GRACE_MS: ms.default(25_000),
    SHUTDOWN_READINESS_DELAY_MS: int(0).default(0),
    NODE_ENV: optional(z.string()),
    EMBEDDED_EMULATOR: optional(flag),
    GRAPHQL_INTROSPECTION: optional(flag),
    GRAPHQL_SUGGESTIONS: optional(flag),
    ROUTER_SHARED_SECRET: optional(secret(16)),
    ROUTER_INVALIDATION_URL: optional(web),
    ROUTER_INVALIDATION_KEY: optional(secret(16)),
    SUBSCRIPTION_CALLBACK_URLS: optional(list('comma-separated http(s) URLs without credentials, query or fragment', validCallback, false)),
    SUBSCRIPTION_CALLBACK_TIMEOUT_MS: int(100, 60_000).default(5_000),
    SUBSCRIPTION_CALLBACK_MAX: int(1).default(10_000),
    TRUSTED_DOCUMENTS: optional(z.string()),
    TRUSTED_PROXIES: optional(list('comma-separated IP addresses, CIDR ranges or loopback/linklocal/uniquelocal', validProxy, true)),
    MAX_OPERATION_COST: int(1).default(1_000),
    COST_EXTENSIONS: optional(flag).default(true),
    GRAPHQL_JIT: optional(flag).default(true),
    GRAPHQL_JIT_CACHE_BYTES: int(64 * 1024).default(64 * 1024 * 1024),
    GRAPHQL_DOCUMENT_CACHE_BYTES: int(64 * 1024).default(32 * 1024 * 1024),
    GRAPHQL_CACHE_CALLER_SHARE: num(0.01, 1).default(0.25),
    MAX_QUERY_DEPTH: int(1).default(12),
    MAX_ALIASES: int(0).default(30),
    MAX_QUERY_TOKENS: int(10).default(2_000),
    MAX_ANONYMOUS_BODY_BYTES: int(256).default(16 * 1024),
    MAX_DIRECTIVES: int(0).default(30),
    MAX_MUTATION_FIELDS: int(1).default(10),
    MAX_UPSTREAM_CALLS_PER_OPERATION: int(1).default(250),
    MAX_RESPONSE_BYTES: int(1024).default(4 * 1024 * 1024),
    MAX_LOG_TEXT_CHARS: int(64).default(8_192),
    REJECTED_KEY_TTL_MS: int(0).default(30_000),
    KEY_REVALIDATE_MS: int(100).default(60_000),
    MAX_HTTP_CONNECTIONS: int(1).default(10_000),
    MAX_HTTP_CONNECTIONS_PER_ADDRESS: int(1).default(256),
    RATE_LIMIT_PER_MINUTE: int(0).default(600),
    UPSTREAM_CALLER_SHARE: num(0.01, 1).default(0.5),
    WS_MAX_CONNECTIONS_PER_KEY: int(1).default(20),
    WS_MAX_CONNECTIONS_PER_ADDRESS: int(1).default(50),
    WS_MAX_CONNECTIONS: int(1).default(10_000),
    WS_MAX_SUBSCRIPTIONS_PER_KEY: int(1).default(200),
    WS_SUBSCRIBE_PER_MINUTE: int(1).default(120),
    WS_CONNECTS_PER_MINUTE: int(1).default(60),
    GRAPHQL_EXPLORER: optional(oneOf(EXPLORERS)),
    METRICS_ENABLED: optional(flag).default(true),
    METRICS_PORT: optional(port),
    METRICS_HOST: optional(z.string()),
    OPS_TOKEN: optional(secret(16)),
    // The SDK reads the other OTEL_* variables itself.
    OTEL_SDK_DISABLED: optional(flag),
    OTEL_TRACES_EXPORTER: optional(oneOf(['otlp', 'none'])),
    OTEL_EXPORTER_OTLP_ENDPOINT: optional(web),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(web),
    OTEL_EXPORTER_OTLP_PROTOCOL: optional(OTLP_JSON),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional(OTLP_JSON),
    OTEL_SERVICE_NAME: optional(z.string()),
    APOLLO_KEY: optional(z.string()),
    APOLLO_GRAPH_REF: optional(z.string().regex(/^[^@\s]+@[^@\s]+$|^[^@\s]+$/, { error: (issue) => `expected <graph id>@<variant>, got ${shown(issue.input)}` })),
    APOLLO_USAGE_REPORTING: optional(flag),
    RECONCILE_INITIAL_MS: int(10).default(2_000),
    RECONCILE_MAX_MS: int(10).default(30_000),
    RECONCILE_JITTER: num(0, 0.9).default(0.2),
    RECONCILE_READS_PER_SECOND: num(0).default(20),
    EVENT_LOG_MAX_EVENTS: int(1_000, 100_000_000).default(100_000),
  })
  // Cross-field rules run even when a field failed, so every problem is named at once (hence the guards).
  .refine((env) => !(env.PAYMENTS_ENV === 'live' && !env.PAYMENTS_API_URL), {
    path: ['PAYMENTS_API_URL'],
    message: 'is required when PAYMENTS_ENV=live (the embedded emulator is sandbox only)',
    when: () => true,
  })
  .refine((env) => !(env.NODE_ENV === 'production' && env.PAYMENTS_ENV !== 'live' && !env.PAYMENTS_API_URL && env.EMBEDDED_EMULATOR !== true), {
    path: ['PAYMENTS_API_URL'],
    message: 'is required when NODE_ENV=production (or set EMBEDDED_EMULATOR=true to run the sandbox emulator on purpose)',
    when: () => true,
  })
  .refine((env) => !(env.APOLLO_USAGE_REPORTING === true && !(env.APOLLO_KEY && env.APOLLO_GRAPH_REF)), {
    path: ['APOLLO_USAGE_REPORTING'],
    message: 'needs APOLLO_KEY and APOLLO_GRAPH_REF',
    when: () => true,
  })
  .refine(
    (env) =>
      !(typeof env.RECONCILE_INITIAL_MS === 'number' && typeof env.RECONCILE_MAX_MS === 'number' && env.RECONCILE_INITIAL_MS > env.RECONCILE_MAX_MS),
    { path: ['RECONCILE_INITIAL_MS'], error: given('must not exceed RECONCILE_MAX_MS', 'RECONCILE_INITIAL_MS', 'RECONCILE_MAX_MS'), when: validFields('RECONCILE_INITIAL_MS', 'RECONCILE_MAX_MS') },
  )
  .refine(
    (env) =>
      !(typeof env.DEFAULT_PAGE_SIZE === 'number' && typeof env.MAX_PAGE_SIZE === 'number' && env.DEFAULT_PAGE_SIZE > env.MAX_PAGE_SIZE),
    { path: ['DEFAULT_PAGE_SIZE'], error: given('must not exceed MAX_PAGE_SIZE', 'DEFAULT_PAGE_SIZE', 'MAX_PAGE_SIZE'), when: validFields('DEFAULT_PAGE_SIZE', 'MAX_PAGE_SIZE') },
  )
  .refine(
    (env) =>
      !(
        typeof env.IDEMPOTENCY_RECORD_MAX_BYTES === 'number' &&
        typeof env.IDEMPOTENCY_CALLER_MAX_BYTES === 'number' &&
        typeof env.IDEMPOTENCY_MAX_BYTES === 'number' &&
        (env.IDEMPOTENCY_RECORD_MAX_BYTES > env.IDEMPOTENCY_CALLER_MAX_BYTES || env.IDEMPOTENCY_CALLER_MAX_BYTES > env.IDEMPOTENCY_MAX_BYTES)
      ),
    {
      path: ['IDEMPOTENCY_CALLER_MAX_BYTES'],
      error: given('must lie between IDEMPOTENCY_RECORD_MAX_BYTES and IDEMPOTENCY_MAX_BYTES', 'IDEMPOTENCY_RECORD_MAX_BYTES', 'IDEMPOTENCY_CALLER_MAX_BYTES', 'IDEMPOTENCY_MAX_BYTES'),
      when: validFields('IDEMPOTENCY_RECORD_MAX_BYTES', 'IDEMPOTENCY_CALLER_MAX_BYTES', 'IDEMPOTENCY_MAX_BYTES'),
    },
  )
  .refine(
    (env) =>
      !(typeof env.WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES === 'number' && typeof env.WEBHOOK_LEDGER_MAX_BYTES === 'number' && env.WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES > env.WEBHOOK_LEDGER_MAX_BYTES),
    {
      path: ['WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES'],
      error: given('must not exceed WEBHOOK_LEDGER_MAX_BYTES', 'WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES', 'WEBHOOK_LEDGER_MAX_BYTES'),
      when: validFields('WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES', 'WEBHOOK_LEDGER_MAX_BYTES'),
    },
  )
  // Otherwise an answer under the per-answer cap could never be read: refused as busy, every time.
  .refine(
    (env) =>
      !(
        typeof env.UPSTREAM_BYTES_IN_FLIGHT === 'number' &&
        typeof env.UPSTREAM_BYTES_IN_FLIGHT_PER_KEY === 'number' &&
        typeof env.UPSTREAM_MAX_RESPONSE_BYTES === 'number' &&
        env.UPSTREAM_MAX_RESPONSE_BYTES <= MAX_UPSTREAM_RESPONSE_BYTES &&
        (env.UPSTREAM_MAX_RESPONSE_BYTES > env.UPSTREAM_BYTES_IN_FLIGHT_PER_KEY || env.UPSTREAM_BYTES_IN_FLIGHT_PER_KEY > env.UPSTREAM_BYTES_IN_FLIGHT)
      ),
    {
      path: ['UPSTREAM_BYTES_IN_FLIGHT_PER_KEY'],
      error: given('must be at least UPSTREAM_MAX_RESPONSE_BYTES and at most UPSTREAM_BYTES_IN_FLIGHT', 'UPSTREAM_MAX_RESPONSE_BYTES', 'UPSTREAM_BYTES_IN_FLIGHT_PER_KEY', 'UPSTREAM_BYTES_IN_FLIGHT'),
      when: validFields('UPSTREAM_MAX_RESPONSE_BYTES', 'UPSTREAM_BYTES_IN_FLIGHT_PER_KEY', 'UPSTREAM_BYTES_IN_FLIGHT'),
    },
  )
  .refine((env) => !env.ROUTER_INVALIDATION_URL === !env.ROUTER_INVALIDATION_KEY, {
    path: ['ROUTER_INVALIDATION_URL'],
    message: 'and ROUTER_INVALIDATION_KEY are set together',
    when: () => true,
  })
  // A short secret can be guessed, and then any webhook forged: live refuses it (sandbox tests may use short ones).
  .refine((env) => !(env.PAYMENTS_ENV === 'live' && shortSecret(env.WEBHOOK_SECRETS) !== null), {
    path: ['WEBHOOK_SECRETS'],
    error: (issue) => {
      const { place, count, length } = shortSecret((issue.input as { WEBHOOK_SECRETS?: string }).WEBHOOK_SECRETS)!;
      return `expected every secret to be ${MIN_LIVE_SECRET} characters or more when PAYMENTS_ENV=live, got one of ${length} (secret ${place} of ${count})`;
    },
    when: () => true,
  });

/** The OpenTelemetry SDK's own variables docs/configuration.md lists: read by the SDK, never a near miss of ours. */
const OTEL_SDK_NAMES = [
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_PROPAGATORS',
  'OTEL_LOG_LEVEL',
];

/** Every variable the gateway reads. */
export const SETTING_NAMES: readonly string[] = Object.freeze([...Object.keys(envSchema.shape), ...OTEL_SDK_NAMES]);

/** A warning for each variable set that is not a setting but looks like one (`others`: the emulator's, with `npm start`). */
export function settingLookalikes(env: Record<string, string | undefined>, others: readonly string[] = []): string[] {
  return lookalikes(env, [...SETTING_NAMES, ...others]).map(lookalikeMessage);
}

/**
 * Whether `npm start` embeds the emulator: no PAYMENTS_API_URL, and outside production unless EMBEDDED_EMULATOR says
 * so. Read from the raw environment, so main.ts can ask before the configuration is checked.
 */
export function embedsEmulator(env: Record<string, string | undefined>): boolean {
  const production = env.NODE_ENV === 'production' || env.PAYMENTS_ENV === 'live';
  return !env.PAYMENTS_API_URL && (!production || env.EMBEDDED_EMULATOR === 'true' || env.EMBEDDED_EMULATOR === '1');
}

/** Traces are opt-in; endpoint rules are the OTLP specification's (a signal URL as is, the general one + `/v1/traces`). */
function tracingConfig(e: z.infer<typeof envSchema>): ObservabilityConfig['tracing'] {
  if (e.OTEL_SDK_DISABLED === true || e.OTEL_TRACES_EXPORTER === 'none') return null;
  const general = e.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (general ? `${general}/v1/traces` : e.OTEL_TRACES_EXPORTER === 'otlp' ? 'http://localhost:4318/v1/traces' : null);
  return url ? { url, serviceName: e.OTEL_SERVICE_NAME ?? 'payments-graphql-gateway' } : null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const DECODED_ITEMS = 2_000;

/** The Redis mode rules read the raw strings, so they are named even when another setting failed to parse. */
function blankAsUnset(env: Record<string, string | undefined>): RedisEnv {
  const pick = (name: keyof RedisEnv) => (env[name] === '' ? undefined : env[name]);
  return { REDIS_URL: pick('REDIS_URL'), REDIS_CLUSTER_NODES: pick('REDIS_CLUSTER_NODES'), REDIS_SENTINELS: pick('REDIS_SENTINELS'), REDIS_SENTINEL_MASTER: pick('REDIS_SENTINEL_MASTER') };
}

export function loadConfig(env: Record<string, string | undefined>): Readonly<Config> {
  const parsed = envSchema.safeParse(env);
  const redisProblems = redisTargetProblems(blankAsUnset(env));
  if (!parsed.success || redisProblems.length > 0) {
    // Name the variable, never echo its value: it may be a secret.
    // One line per problem: a value failing two checks the same way (1.5 is neither whole nor in range) says it once.
    throw new ConfigError([...new Set([...(parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? []), ...redisProblems])]);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production' || e.PAYMENTS_ENV === 'live';
  // Local unless asked: `npm start` serves a sandbox key and the emulator's console; the image sets HOST=0.0.0.0.
  const host = e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1');
  return Object.freeze({
    port: e.PORT,
    host,
    paymentsApiUrl: e.PAYMENTS_API_URL?.replace(/\/+$/, '') ?? null,
    paymentsEnv: e.PAYMENTS_ENV,
    webhookMaxBodyBytes: e.WEBHOOK_MAX_BODY_BYTES,
    webhookSecrets: Object.freeze(secretList(e.WEBHOOK_SECRETS)),
    redis: redisTarget(e),
    logLevel: e.LOG_LEVEL,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    upstreamHttpClient: e.UPSTREAM_HTTP_CLIENT,
    upstreamMaxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
    upstreamBytesInFlight: Object.freeze({ totalBytes: e.UPSTREAM_BYTES_IN_FLIGHT, perKeyBytes: e.UPSTREAM_BYTES_IN_FLIGHT_PER_KEY }),
    currencyCacheTtlMs: e.CURRENCY_CACHE_TTL_MS,
    entityCache: Object.freeze({
      enabled: e.ENTITY_CACHE,
      maxObjects: e.ENTITY_CACHE_MAX_OBJECTS,
      maxBytes: e.ENTITY_CACHE_MAX_BYTES,
      maxEntryBytes: e.ENTITY_CACHE_MAX_ENTRY_BYTES,
      customerTtlMs: e.CUSTOMER_CACHE_TTL_MS,
      finalTtlMs: e.FINAL_OBJECT_CACHE_TTL_MS,
      pendingMaxAgeMs: e.PENDING_OBJECT_MAX_AGE_MS,
      decodedItems: e.ENTITY_CACHE ? DECODED_ITEMS : 0,
    }),
    pagination: Object.freeze({ defaultFirst: e.DEFAULT_PAGE_SIZE, maxFirst: e.MAX_PAGE_SIZE }),
    subscriptionQueueLimit: e.SUBSCRIPTION_QUEUE_LIMIT,
    subscriptionMaxBufferedBytes: e.SUBSCRIPTION_MAX_BUFFERED_BYTES,
    operationDeadlineMs: e.OPERATION_DEADLINE_MS,
    upstreamResilience: Object.freeze({
      retry: Object.freeze({
        maxAttempts: e.UPSTREAM_MAX_ATTEMPTS,
        baseDelayMs: e.UPSTREAM_RETRY_BASE_MS,
        maxDelayMs: e.UPSTREAM_RETRY_MAX_DELAY_MS,
        maxRetryAfterMs: e.UPSTREAM_MAX_RETRY_AFTER_MS,
        budgetRatio: e.UPSTREAM_RETRY_BUDGET_RATIO,
        budgetCapacity: 10,
      }),
      breaker: Object.freeze({
        errorThresholdPercentage: e.BREAKER_ERROR_PERCENT,
        volumeThreshold: e.BREAKER_VOLUME_THRESHOLD,
        rollingWindowMs: e.BREAKER_WINDOW_MS,
        resetTimeoutMs: e.BREAKER_RESET_MS,
        routeConcurrency: e.UPSTREAM_ROUTE_CONCURRENCY,
        routeQueueLimit: e.UPSTREAM_ROUTE_QUEUE_LIMIT,
        callerShare: e.UPSTREAM_CALLER_SHARE,
        minFailingKeys: e.BREAKER_MIN_KEYS,
        failingKeyShare: e.BREAKER_KEY_SHARE,
      }),
    }),
    idempotency: Object.freeze({
      ttlMs: e.IDEMPOTENCY_TTL_MS,
      waitMs: e.IDEMPOTENCY_WAIT_MS,
      // A running record outlives its operation's deadline, then frees the key if its owner died.
      lockMs: e.OPERATION_DEADLINE_MS + 5_000,
      recordMaxBytes: e.IDEMPOTENCY_RECORD_MAX_BYTES,
      callerMaxBytes: e.IDEMPOTENCY_CALLER_MAX_BYTES,
      maxBytes: e.IDEMPOTENCY_MAX_BYTES,
      // A Redis that loses records on restart lets a retry act twice: production refuses to start on one.
      redisPersistence: e.IDEMPOTENCY_REDIS_PERSISTENCE ?? (production ? 'require' : 'warn'),
      // Redis found to have lost records: new claims are refused this long, while clients retry what was lost.
      quarantineMs: e.IDEMPOTENCY_QUARANTINE_MS,
    }),
    dataDir: path.resolve(e.DATA_DIR),
    dataDirSet: Boolean(env.DATA_DIR?.trim()),
    webhookLedger: Object.freeze({ maxBytes: e.WEBHOOK_LEDGER_MAX_BYTES, accountMaxBytes: e.WEBHOOK_LEDGER_ACCOUNT_MAX_BYTES }),
    shutdown: Object.freeze({ graceMs: e.SHUTDOWN_GRACE_MS, readinessDelayMs: e.SHUTDOWN_READINESS_DELAY_MS }),
    production,
    embeddedEmulator: embedsEmulator(env),
    graphql: Object.freeze({
      introspection: e.GRAPHQL_INTROSPECTION ?? !production,
      suggestions: e.GRAPHQL_SUGGESTIONS ?? !production,
      routerSharedSecret: e.ROUTER_SHARED_SECRET ?? null,
      costExtensions: e.COST_EXTENSIONS,
      jit: e.GRAPHQL_JIT,
      caches: Object.freeze({ jitBytes: e.GRAPHQL_JIT_CACHE_BYTES, documentBytes: e.GRAPHQL_DOCUMENT_CACHE_BYTES, callerShare: e.GRAPHQL_CACHE_CALLER_SHARE }),
      routerInvalidation: e.ROUTER_INVALIDATION_URL && e.ROUTER_INVALIDATION_KEY ? Object.freeze({ url: e.ROUTER_INVALIDATION_URL, key: e.ROUTER_INVALIDATION_KEY }) : null,
      subscriptionCallbacks: Object.freeze({ allowed: Object.freeze(callbackList(e.SUBSCRIPTION_CALLBACK_URLS)), timeoutMs: e.SUBSCRIPTION_CALLBACK_TIMEOUT_MS, max: e.SUBSCRIPTION_CALLBACK_MAX }),
    }),
    limits: Object.freeze({
      maxCost: e.MAX_OPERATION_COST,
      maxDepth: e.MAX_QUERY_DEPTH,
      maxAliases: e.MAX_ALIASES,
      maxTokens: e.MAX_QUERY_TOKENS,
      maxAnonymousBodyBytes: e.MAX_ANONYMOUS_BODY_BYTES,
      maxHttpConnections: e.MAX_HTTP_CONNECTIONS,
      maxHttpConnectionsPerAddress: e.MAX_HTTP_CONNECTIONS_PER_ADDRESS,
      maxDirectives: e.MAX_DIRECTIVES,
      maxMutationFields: e.MAX_MUTATION_FIELDS,
      maxUpstreamCalls: e.MAX_UPSTREAM_CALLS_PER_OPERATION,
      maxResponseBytes: e.MAX_RESPONSE_BYTES,
      maxLogTextChars: e.MAX_LOG_TEXT_CHARS,
      rejectedKeyTtlMs: e.REJECTED_KEY_TTL_MS,
      keyRevalidateMs: e.KEY_REVALIDATE_MS,
      operationsPerMinute: e.RATE_LIMIT_PER_MINUTE,
      trustedProxies: proxyList(e.TRUSTED_PROXIES),
      ws: Object.freeze({
        maxConnectionsPerKey: e.WS_MAX_CONNECTIONS_PER_KEY,
        maxConnectionsPerAddress: e.WS_MAX_CONNECTIONS_PER_ADDRESS,
        maxConnections: e.WS_MAX_CONNECTIONS,
        maxSubscriptionsPerKey: e.WS_MAX_SUBSCRIPTIONS_PER_KEY,
        subscribesPerMinute: e.WS_SUBSCRIBE_PER_MINUTE,
        connectsPerMinute: e.WS_CONNECTS_PER_MINUTE,
      }),
    }),
    opsToken: e.OPS_TOKEN ?? null,
    explorer: e.GRAPHQL_EXPLORER ?? (production ? 'off' : 'graphiql'),
    trustedDocumentsPath: e.TRUSTED_DOCUMENTS ?? null,
    observability: Object.freeze({
      metrics: Object.freeze({ enabled: e.METRICS_ENABLED, port: e.METRICS_PORT ?? null, host: e.METRICS_HOST ?? host }),
      tracing: tracingConfig(e),
      apollo: e.APOLLO_KEY
        ? Object.freeze({ key: e.APOLLO_KEY, graphRef: e.APOLLO_GRAPH_REF ?? null, usageReporting: e.APOLLO_USAGE_REPORTING ?? false })
        : null,
    }),
    eventLogMaxEvents: e.EVENT_LOG_MAX_EVENTS,
    reconcile: Object.freeze({
      initialMs: e.RECONCILE_INITIAL_MS,
      maxMs: e.RECONCILE_MAX_MS,
      jitter: e.RECONCILE_JITTER,
      readsPerSecond: e.RECONCILE_READS_PER_SECOND,
    }),
  });
}
