/**
 * A gateway with its real-time side wired the way main.ts wires it in
 * embedded mode: the gateway starts first, the emulator forwards every
 * webhook to the gateway's /webhooks/payments signed with a secret the
 * gateway trusts. Subscribers are real graphql-ws clients over `ws`.
 */
import { randomBytes } from 'node:crypto';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { signWebhookBody, startEmulator, type EmulatorOptions, type RunningEmulator } from '../../emulator/index.js';

export interface RealtimeStack {
  emulator: RunningEmulator;
  gateway: RunningGateway;
  /** The secret the emulator signs its forwarded webhooks with (trusted by the gateway). */
  secret: string;
  wsUrl: string;
  gql<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> | undefined, key: string): Promise<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>;
  health(): Promise<Health>;
  stop(): Promise<void>;
}

export interface Health {
  status: string;
  subscriptions: { connections: number; subscriptions: number; closedTooSlow: number; sseStreams: number };
  reconcile: { watched: number; owned: number; reads: number; changes: number; deferred: number; errors: number; readsPerSecondCap: number };
}

export interface RealtimeStackOptions {
  env?: Record<string, string>;
  emulator?: Partial<EmulatorOptions>;
  /** Deliver the emulator's webhooks to this gateway (default true). */
  forward?: boolean;
  /** Reuse an emulator (several gateways over one upstream). */
  sharedEmulator?: RunningEmulator;
  /** Collect the gateway's log lines (at info) here. */
  logs?: string[];
}

export async function startRealtimeStack(options: RealtimeStackOptions = {}): Promise<RealtimeStack> {
  const secret = `whsec_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PAYMENTS_API_URL: 'http://127.0.0.1:1',
    LOG_LEVEL: 'silent',
    WEBHOOK_SECRETS: secret,
    ...options.env,
  });
  let upstream: UpstreamClient | null = null;
  const gateway = await startGateway({
    config,
    // The scope carries the operation's deadline and its gate (budget, key guard): passed on whole.
    upstream: { forKey: (key, scope) => upstream!.forKey(key, scope) },
    logger: options.logs ? createLogger('info', { destination: { write: (line: string) => void options.logs!.push(line) } }) : createLogger(config.logLevel),
  });
  const forward = options.forward ?? true;
  const emulator =
    options.sharedEmulator ??
    (await startEmulator({
      port: 0,
      settleMs: 50,
      webhookRetryBaseMs: 20,
      ...(forward ? { forwardTo: `http://127.0.0.1:${gateway.port}/webhooks/payments`, forwardSecret: secret } : {}),
      ...options.emulator,
    }));
  upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs });
  const base = `http://127.0.0.1:${gateway.port}`;

  return {
    emulator,
    gateway,
    secret,
    wsUrl: `ws://127.0.0.1:${gateway.port}/graphql`,
    async gql(query, variables, key) {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as never;
    },
    async health() {
      return (await (await fetch(`${base}/healthz`)).json()) as never;
    },
    async stop() {
      await gateway.stop();
      upstream?.close();
      if (!options.sharedEmulator) await emulator.stop();
    },
  };
}

/** POSTs a webhook body to a gateway, signed like the upstream signs (or with a header of the test's choosing). */
export async function postWebhook(
  gatewayPort: number,
  body: string,
  sign: { secret: string; at?: number } | { header: string | null },
): Promise<{ status: number; json: unknown }> {
  const header =
    'header' in sign ? sign.header : signWebhookBody(sign.secret, body, sign.at ?? Math.floor(Date.now() / 1000));
  const res = await fetch(`http://127.0.0.1:${gatewayPort}/webhooks/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'x-fedapay-signature': header }) },
    body,
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
}

let eventSeq = 900_000_000;
/** A transaction webhook event as the upstream sends it, for one account and one state. */
export function transactionEvent(opts: {
  accountId: number;
  transaction: Record<string, unknown> & { id: number };
  type?: string;
  eventId?: number;
}): string {
  eventSeq += 1;
  const type = opts.type ?? `transaction.${String(opts.transaction.status ?? 'updated')}`;
  return JSON.stringify({
    id: opts.eventId ?? eventSeq,
    name: type,
    type,
    object: 'transaction',
    entity: opts.transaction,
    object_id: opts.transaction.id,
    account_id: opts.accountId,
    created_at: new Date().toISOString(),
  });
}

export interface Subscription<T> {
  /** Values received so far. */
  values: T[];
  /** Resolves with the n-th value (1-based), or rejects after `timeoutMs`. */
  nth(n: number, timeoutMs?: number): Promise<T>;
  /** Resolves with the first error the operation ended with. */
  error: Promise<unknown>;
  /** Resolves when the server completes the operation. */
  completed: Promise<void>;
  dispose(): void;
}

/** A graphql-ws client authenticated with `key`; `closed` resolves with the close event. */
export function wsClient(url: string, key: string | null, extra: Partial<Parameters<typeof createClient>[0]> = {}) {
  let resolveClosed: (e: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((r) => (resolveClosed = r));
  let resolveConnected: () => void;
  const connected = new Promise<void>((r) => (resolveConnected = r));
  const client: Client = createClient({
    url,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: key === null ? {} : { authorization: `Bearer ${key}` },
    on: {
      connected: () => resolveConnected(),
      closed: (e) => resolveClosed(e as { code: number; reason: string }),
    },
    onNonLazyError: () => undefined,
    ...extra,
  });
  return { client, closed, connected };
}

export function subscribe<T>(client: Client, query: string, variables?: Record<string, unknown>): Subscription<T> {
  const values: T[] = [];
  const waiters: { n: number; resolve: (v: T) => void }[] = [];
  let rejectError: (e: unknown) => void;
  const error = new Promise<unknown>((resolve) => (rejectError = resolve));
  let resolveCompleted: () => void;
  const completed = new Promise<void>((resolve) => (resolveCompleted = resolve));
  const dispose = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) {
          rejectError(result.errors);
          return;
        }
        values.push(result.data as T);
        for (const w of waiters.filter((w) => w.n <= values.length)) w.resolve(values[w.n - 1]!);
      },
      error: (e) => rejectError(e),
      complete: () => resolveCompleted(),
    },
  );
  return {
    values,
    error,
    completed,
    nth(n, timeoutMs = 3000) {
      if (values.length >= n) return Promise.resolve(values[n - 1]!);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no value #${n} within ${timeoutMs} ms (got ${values.length})`)), timeoutMs);
        waiters.push({ n, resolve: (v) => { clearTimeout(timer); resolve(v); } });
      });
    },
    dispose,
  };
}

/** Live subscriptions held by the gateway serving `url` (ws:// or http://), from its /healthz. */
export async function liveSubscriptions(url: string): Promise<number> {
  const health = new URL('/healthz', url.replace(/^ws/, 'http'));
  const body = (await (await fetch(health)).json()) as { subscriptions: { subscriptions: number } };
  return body.subscriptions.subscriptions;
}

/**
 * Subscribes and resolves once the gateway holds the subscription, so a test
 * acts only after it is listening (graphql-ws does not acknowledge a subscribe).
 */
export async function subscribeLive<T>(url: string, client: Client, query: string, variables?: Record<string, unknown>): Promise<Subscription<T>> {
  const before = await liveSubscriptions(url);
  const sub = subscribe<T>(client, query, variables);
  await eventually(() => liveSubscriptions(url), (n) => n > before, 5000);
  heldBy.set(client, (heldBy.get(client) ?? 0) + 1);
  return sub;
}

const heldBy = new WeakMap<Client, number>();

/** Disposes a client and resolves once the gateway has dropped its live subscriptions. */
export async function disposeLive(url: string, client: Client): Promise<void> {
  const before = await liveSubscriptions(url);
  const held = heldBy.get(client) ?? 0;
  await client.dispose();
  await eventually(() => liveSubscriptions(url), (n) => n <= before - held, 5000);
}

/** Moves an object's status upstream the way the payer's phone would (the emulator's admin API). */
export async function setUpstreamStatus(emulatorUrl: string, kind: 'transactions' | 'payouts', id: number, status: string): Promise<void> {
  const res = await fetch(`${emulatorUrl}/_emulator/${kind}/${id}/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  if (res.status !== 200) throw new Error(`emulator refused the status move: ${res.status} ${await res.text()}`);
}

/** Upstream reads of one object so far, as the emulator counts them. */
export function upstreamReads(emulator: { stats(): { routes: Record<string, number> } }, kind: 'transactions' | 'payouts'): number {
  return emulator.stats().routes[`GET /v1/${kind}/:id`] ?? 0;
}

/** Polls `fn` until `ok` holds, or fails after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await fn();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 25));
  } while (Date.now() < deadline);
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}

/** Resolves after `ms`; for asserting that something did NOT happen in a window. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
