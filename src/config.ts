/**
 * Environment -> one validated, frozen config object. Read once at start by
 * main.ts; nothing below the HTTP layer reads process.env. Every problem is
 * collected and reported at once, so a bad deployment is fixed in one go.
 */
import { z } from 'zod';
import type { ResilienceOptions } from './upstream/resilience.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const port = z.coerce.number().int().min(0).max(65_535);
const positiveMs = z.coerce.number().int().positive();
/** An empty string counts as unset: `PAYMENTS_API_URL= npm start` means "use the emulator". */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const envSchema = z
  .object({
    PORT: optional(port).default(4000),
    HOST: optional(z.string()).default('0.0.0.0'),
    PAYMENTS_API_URL: optional(z.url({ protocol: /^https?$/ })),
    PAYMENTS_ENV: optional(z.enum(['sandbox', 'live'])).default('sandbox'),
    WEBHOOK_SECRETS: optional(z.string()),
    REDIS_URL: optional(z.url({ protocol: /^rediss?$/ })),
    LOG_LEVEL: optional(z.enum(LOG_LEVELS)).default('info'),
    UPSTREAM_TIMEOUT_MS: optional(positiveMs).default(10_000),
    CURRENCY_CACHE_TTL_MS: optional(z.coerce.number().int().min(0)).default(60_000),
    MAX_PAGE_SIZE: optional(z.coerce.number().int().min(1).max(100)).default(100),
    DEFAULT_PAGE_SIZE: optional(z.coerce.number().int().min(1).max(100)).default(20),
    SUBSCRIPTION_QUEUE_LIMIT: optional(z.coerce.number().int().min(1).max(100_000)).default(256),
    SUBSCRIPTION_MAX_BUFFERED_BYTES: optional(z.coerce.number().int().min(1024)).default(4 * 1024 * 1024),
    OPERATION_DEADLINE_MS: optional(positiveMs).default(15_000),
    UPSTREAM_MAX_ATTEMPTS: optional(z.coerce.number().int().min(1).max(10)).default(3),
    UPSTREAM_RETRY_BASE_MS: optional(z.coerce.number().int().min(0)).default(50),
    UPSTREAM_RETRY_MAX_DELAY_MS: optional(z.coerce.number().int().min(0)).default(1_000),
    UPSTREAM_MAX_RETRY_AFTER_MS: optional(z.coerce.number().int().min(0)).default(2_000),
    UPSTREAM_RETRY_BUDGET_RATIO: optional(z.coerce.number().min(0).max(1)).default(0.2),
    UPSTREAM_ROUTE_CONCURRENCY: optional(z.coerce.number().int().min(1)).default(64),
    UPSTREAM_ROUTE_QUEUE_LIMIT: optional(z.coerce.number().int().min(0)).default(1_024),
    BREAKER_ERROR_PERCENT: optional(z.coerce.number().int().min(1).max(100)).default(50),
    BREAKER_VOLUME_THRESHOLD: optional(z.coerce.number().int().min(1)).default(20),
    BREAKER_WINDOW_MS: optional(positiveMs).default(10_000),
    BREAKER_RESET_MS: optional(positiveMs).default(10_000),
    IDEMPOTENCY_TTL_MS: optional(positiveMs).default(24 * 60 * 60 * 1000),
    IDEMPOTENCY_WAIT_MS: optional(z.coerce.number().int().min(0)).default(5_000),
    SHUTDOWN_GRACE_MS: optional(positiveMs).default(25_000),
    SHUTDOWN_READINESS_DELAY_MS: optional(z.coerce.number().int().min(0)).default(0),
  })
  // Cross-field rules run even when a field above failed, so every problem is named at once;
  // hence the guards on values that may not have parsed.
  .refine((env) => !(env.PAYMENTS_ENV === 'live' && !env.PAYMENTS_API_URL), {
    path: ['PAYMENTS_API_URL'],
    message: 'is required when PAYMENTS_ENV=live (the embedded emulator is sandbox only)',
    when: () => true,
  })
  .refine(
    (env) =>
      !(typeof env.DEFAULT_PAGE_SIZE === 'number' && typeof env.MAX_PAGE_SIZE === 'number' && env.DEFAULT_PAGE_SIZE > env.MAX_PAGE_SIZE),
    { path: ['DEFAULT_PAGE_SIZE'], message: 'must not exceed MAX_PAGE_SIZE', when: () => true },
  );

export interface Config {
  port: number;
  host: string;
  /** Null: start the embedded emulator and use it. */
  paymentsApiUrl: string | null;
  paymentsEnv: 'sandbox' | 'live';
  webhookSecrets: readonly string[];
  redisUrl: string | null;
  logLevel: (typeof LOG_LEVELS)[number];
  upstreamTimeoutMs: number;
  currencyCacheTtlMs: number;
  pagination: { defaultFirst: number; maxFirst: number };
  /** Per subscription: events queued for a client that does not keep up, before it is disconnected. */
  subscriptionQueueLimit: number;
  /** Per connection: unsent bytes beyond which the client counts as not keeping up. */
  subscriptionMaxBufferedBytes: number;
  /** Whole-operation budget: upstream calls and retries of one GraphQL operation stop at it. */
  operationDeadlineMs: number;
  /** Retries, retry budget, circuit breakers and per-route concurrency of the upstream client. */
  upstreamResilience: ResilienceOptions;
  idempotency: { ttlMs: number; waitMs: number; lockMs: number };
  /** SIGTERM: /readyz answers 503 for readinessDelayMs, then in-flight work gets graceMs to finish. */
  shutdown: { graceMs: number; readinessDelayMs: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Record<string, string | undefined>): Readonly<Config> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    // Name the variable, never echo its value: it may be a secret.
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    paymentsApiUrl: e.PAYMENTS_API_URL?.replace(/\/+$/, '') ?? null,
    paymentsEnv: e.PAYMENTS_ENV,
    webhookSecrets: Object.freeze(
      (e.WEBHOOK_SECRETS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    ),
    redisUrl: e.REDIS_URL ?? null,
    logLevel: e.LOG_LEVEL,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    currencyCacheTtlMs: e.CURRENCY_CACHE_TTL_MS,
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
      }),
    }),
    idempotency: Object.freeze({
      ttlMs: e.IDEMPOTENCY_TTL_MS,
      waitMs: e.IDEMPOTENCY_WAIT_MS,
      // A running record outlives its operation's deadline, then frees the key if its owner died.
      lockMs: e.OPERATION_DEADLINE_MS + 5_000,
    }),
    shutdown: Object.freeze({ graceMs: e.SHUTDOWN_GRACE_MS, readinessDelayMs: e.SHUTDOWN_READINESS_DELAY_MS }),
  });
}
