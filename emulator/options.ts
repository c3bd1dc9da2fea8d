/**
 * Emulator configuration: the options `startEmulator` takes, and the one place
 * that reads them from the environment (`loadEmulatorOptionsFromEnv`).
 * Nothing else in the emulator reads `process.env`.
 */
import { z } from 'zod';

export type ResponseStyle = 'enveloped' | 'plain';
/**
 * Which query parameters lists and searches read. `lenient` reads every filter
 * the gateway sends (`filters[status]`, ...); `strict` reads only what the API
 * family documents, `page` and `per_page`, and ignores the rest as a real
 * server that does not know a filter would (docs/upstream.md, Operations).
 */
export type ListParams = 'lenient' | 'strict';

/** Minimal structural logger; a pino logger fits it. */
export interface EmulatorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const faultSpecSchema = z.object({
  /** `METHOD /v1/pattern` exactly as in `/_emulator/stats`, or `*` for every /v1 route. */
  route: z.string().min(1),
  status: z.number().int().min(100).max(599).optional(),
  body: z.unknown().optional(),
  reset: z.boolean().optional(),
  hang: z.boolean().optional(),
  retryAfter: z.number().min(0).optional(),
  malformed: z.boolean().optional(),
  latencyMs: z.number().min(0).optional(),
  times: z.number().int().min(1).optional(),
  probability: z.number().min(0).max(1).optional(),
});
export type FaultSpec = z.infer<typeof faultSpecSchema>;

export interface EmulatorOptions {
  /** 0 picks a free port. */
  port: number;
  host: string;
  responseStyle: ResponseStyle;
  listParams: ListParams;
  /** Delay between the send/start step and the sandbox outcome (approved, declined, sent, failed). */
  settleMs: number;
  /** Added to every /v1 request, plus a uniform random 0..latencyJitterMs. */
  latencyMs: number;
  latencyJitterMs: number;
  /** Every account's events are also delivered to this URL, signed with forwardSecret. */
  forwardTo: string | undefined;
  forwardSecret: string | undefined;
  /** Seed demo data (key `sk_sandbox_demo`) at start. */
  seed: boolean;
  logger: EmulatorLogger | undefined;
  /** Faults active from the start (same objects as `POST /_emulator/faults`). */
  faults: FaultSpec[];
  /** Webhook retry backoff: attempt n waits webhookRetryBaseMs * 2^(n-1). */
  webhookRetryBaseMs: number;
  /** Attempts per delivery, the first one included. */
  webhookMaxAttempts: number;
  webhookTimeoutMs: number;
  /** Request logs kept per account; beyond it plus a tenth, the oldest are dropped back to it. */
  maxLogsPerAccount: number;
  /** Events kept per account, each with its object's snapshot; beyond it plus a tenth, the oldest are dropped back to it. */
  maxEventsPerAccount: number;
  /**
   * When set, the admin API (/_emulator/*) answers only requests carrying
   * `x-emulator-admin-token: <token>`; the gateway's embedded emulator always sets one.
   */
  adminToken: string | undefined;
  /**
   * Serve the console page at /_emulator/console (the embedded emulator does):
   * pending objects with buttons that settle them, webhook deliveries, faults.
   */
  console: boolean;
  /**
   * Live rehearsal: `sk_live_` keys are accepted too, each its own account with
   * the sandbox's phone numbers, so a gateway with PAYMENTS_ENV=live can be
   * tried end to end before the real provider. Never the default; no money moves.
   */
  liveRehearsal: boolean;
}

export const defaultEmulatorOptions: Readonly<EmulatorOptions> = Object.freeze({
  adminToken: undefined,
  console: false,
  liveRehearsal: false,
  port: 0,
  host: '127.0.0.1',
  responseStyle: 'enveloped',
  listParams: 'lenient',
  settleMs: 1500,
  latencyMs: 0,
  latencyJitterMs: 0,
  forwardTo: undefined,
  forwardSecret: undefined,
  seed: false,
  logger: undefined,
  faults: [],
  webhookRetryBaseMs: 1000,
  webhookMaxAttempts: 5,
  webhookTimeoutMs: 5000,
  maxLogsPerAccount: 5000,
  maxEventsPerAccount: 10_000,
});

export function resolveOptions(partial: Partial<EmulatorOptions> = {}): EmulatorOptions {
  const merged: EmulatorOptions = { ...defaultEmulatorOptions };
  for (const [key, value] of Object.entries(partial)) {
    // An explicit `undefined` keeps the default rather than erasing it.
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  return merged;
}

const intFrom = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a non-negative integer`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);

const envSchema = z
  .object({
    EMULATOR_PORT: intFrom('EMULATOR_PORT', 0, 65535).default(4010),
    EMULATOR_HOST: z.string().min(1).default('127.0.0.1'),
    EMULATOR_RESPONSE_STYLE: z
      .enum(['enveloped', 'plain'], { message: 'EMULATOR_RESPONSE_STYLE must be "enveloped" or "plain"' })
      .default('enveloped'),
    EMULATOR_LIST_PARAMS: z
      .enum(['lenient', 'strict'], { message: 'EMULATOR_LIST_PARAMS must be "lenient" or "strict"' })
      .default('lenient'),
    EMULATOR_LATENCY_MS: intFrom('EMULATOR_LATENCY_MS', 0, 600_000).default(0),
    EMULATOR_LATENCY_JITTER_MS: intFrom('EMULATOR_LATENCY_JITTER_MS', 0, 600_000).default(0),
    EMULATOR_SETTLE_MS: intFrom('EMULATOR_SETTLE_MS', 0, 3_600_000).default(1500),
    EMULATOR_FORWARD_TO: z.url({ message: 'EMULATOR_FORWARD_TO must be an http(s) URL', protocol: /^https?$/ }).optional(),
    EMULATOR_FORWARD_SECRET: z.string().min(1).optional(),
    EMULATOR_SEED: z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'EMULATOR_SEED must be true or false' })
      .transform((v) => v === 'true' || v === '1' || v === 'yes')
      .default(false),
    EMULATOR_FAULTS: z.string().optional(),
    EMULATOR_WEBHOOK_RETRY_BASE_MS: intFrom('EMULATOR_WEBHOOK_RETRY_BASE_MS', 0, 3_600_000).default(1000),
    EMULATOR_WEBHOOK_MAX_ATTEMPTS: intFrom('EMULATOR_WEBHOOK_MAX_ATTEMPTS', 1, 50).default(5),
    EMULATOR_LIVE_REHEARSAL: z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'EMULATOR_LIVE_REHEARSAL must be true or false' })
      .transform((v) => v === 'true' || v === '1' || v === 'yes')
      .default(false),
  });

/** Every EMULATOR_* variable read here: `npm start` names a near miss of one ("did you mean"). */
export const EMULATOR_SETTING_NAMES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

export type EnvResult = { ok: true; options: EmulatorOptions } | { ok: false; problems: string[] };

/**
 * Reads the EMULATOR_* variables. Empty strings count as unset. Every problem is
 * reported at once; the caller (main.ts) prints them and exits non-zero.
 */
export function parseEmulatorEnv(env: Record<string, string | undefined>): EnvResult {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith('EMULATOR_') && v !== undefined && v !== '') cleaned[k] = v;
  const problems: string[] = [];
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.') || 'env'}: ${issue.message}`);
  }
  // Checked outside the schema so that it is reported along with every other problem.
  if (cleaned.EMULATOR_FORWARD_TO !== undefined && cleaned.EMULATOR_FORWARD_SECRET === undefined) {
    problems.push('EMULATOR_FORWARD_SECRET: required with EMULATOR_FORWARD_TO');
  }
  let faults: FaultSpec[] = [];
  if (cleaned.EMULATOR_FAULTS !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(cleaned.EMULATOR_FAULTS);
    } catch {
      problems.push('EMULATOR_FAULTS: must be a JSON array of fault objects');
    }
    if (raw !== undefined) {
      const f = z.array(faultSpecSchema).safeParse(raw);
      if (f.success) faults = f.data;
      else for (const issue of f.error.issues) problems.push(`EMULATOR_FAULTS.${issue.path.join('.')}: ${issue.message}`);
    }
  }
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const e = parsed.data;
  return {
    ok: true,
    options: resolveOptions({
      port: e.EMULATOR_PORT,
      host: e.EMULATOR_HOST,
      responseStyle: e.EMULATOR_RESPONSE_STYLE,
      listParams: e.EMULATOR_LIST_PARAMS,
      latencyMs: e.EMULATOR_LATENCY_MS,
      latencyJitterMs: e.EMULATOR_LATENCY_JITTER_MS,
      settleMs: e.EMULATOR_SETTLE_MS,
      forwardTo: e.EMULATOR_FORWARD_TO,
      forwardSecret: e.EMULATOR_FORWARD_SECRET,
      seed: e.EMULATOR_SEED,
      faults,
      webhookRetryBaseMs: e.EMULATOR_WEBHOOK_RETRY_BASE_MS,
      webhookMaxAttempts: e.EMULATOR_WEBHOOK_MAX_ATTEMPTS,
      liveRehearsal: e.EMULATOR_LIVE_REHEARSAL,
    }),
  };
}

export class EmulatorConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid emulator configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'EmulatorConfigError';
  }
}

/** Options from the environment; throws `EmulatorConfigError` listing every problem. */
export function loadEmulatorOptionsFromEnv(env: Record<string, string | undefined>): EmulatorOptions {
  const result = parseEmulatorEnv(env);
  if (!result.ok) throw new EmulatorConfigError(result.problems);
  return result.options;
}
