/**
 * Environment -> one validated, frozen config object. Read once at start by
 * main.ts; nothing below the HTTP layer reads process.env. Every problem is
 * collected and reported at once, so a bad deployment is fixed in one go.
 */
import { z } from 'zod';

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
  })
  .superRefine((env, ctx) => {
    if (env.PAYMENTS_ENV === 'live' && !env.PAYMENTS_API_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['PAYMENTS_API_URL'],
        message: 'is required when PAYMENTS_ENV=live (the embedded emulator is sandbox only)',
      });
    }
    if (env.DEFAULT_PAGE_SIZE > env.MAX_PAGE_SIZE) {
      ctx.addIssue({ code: 'custom', path: ['DEFAULT_PAGE_SIZE'], message: 'must not exceed MAX_PAGE_SIZE' });
    }
  });

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
  });
}
