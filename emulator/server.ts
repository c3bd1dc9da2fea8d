/**
 * The request pipeline over node:http:
 *   /v1/...       count in stats -> latency -> fault -> auth -> route -> handler -> log
 *   /_emulator/.. the admin API (admin.ts: token when set, not counted, never under /v1)
 *   /_emulator/console  the console page (console.ts), when the console option is on
 *   /healthz      200
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { adminAllowed, handleAdmin, sendJson, type AdminHost } from './admin.js';
import { CONSOLE_PATH, consolePage } from './console.js';
import type { Engine } from './engine.js';
import { ApiError } from './errors.js';
import { Faults, malformedBody } from './faults.js';
import { parseBody, parseQuery, readRawBody } from './http/body.js';
import { Router } from './http/router.js';
import type { ApiRouter, Handler, Reply } from './http/types.js';
import { faultSpecSchema } from './options.js';
import { registerAccounts } from './resources/accounts.js';
import { registerCurrencies } from './resources/currencies.js';
import { registerCustomers } from './resources/customers.js';
import { registerEvents } from './resources/events.js';
import { redact, registerLogs } from './resources/logs.js';
import { registerPayouts } from './resources/payouts.js';
import { registerTransactions } from './resources/transactions.js';
import { registerWebhooks } from './resources/webhooks.js';
import { Scheduler } from './scheduler.js';
import { DEMO_API_KEY, seedDemo } from './seed.js';
import type { AccountRow } from './store.js';

export interface StatsSnapshot {
  total: number;
  routes: Record<string, number>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const UNMATCHED = '<unmatched>';
/** Responses whose body carries a secret: redacted before they become a Log. */
const SECRET_RESPONSES = new Set(['POST /v1/webhooks', 'POST /v1/transactions/:id/token']);
const MAX_LOGGED_CHARS = 16_384;
const MAX_IDEMPOTENCY_RECORDS = 10_000;

export function buildApiRouter(): ApiRouter {
  const router = new Router<Handler>();
  registerTransactions(router);
  registerPayouts(router);
  registerCustomers(router);
  registerCurrencies(router);
  registerWebhooks(router);
  registerEvents(router);
  registerLogs(router);
  registerAccounts(router);
  return router;
}

type AuthResult = { account: AccountRow } | { error: ApiError };

export class EmulatorApp implements AdminHost {
  readonly router = buildApiRouter();
  readonly faults = new Faults();
  private readonly counts = new Map<string, number>();
  private total = 0;
  private readonly idempotency = new Map<string, { status: number; text: string }>();
  private readonly seeded = new Set<string>();
  /** Keys answered 401 as a revoked key is: a merchant's leaked key, rolled. */
  private readonly revoked = new Set<string>();
  /** Latency and hang timers: separate from the engine's so that `reset()` never strands a request. */
  private readonly delays = new Scheduler();
  private readonly knownRoutes: Set<string>;

  constructor(readonly engine: Engine) {
    this.knownRoutes = new Set(this.router.routeKeys());
    for (const spec of engine.options.faults) this.addFault(spec);
  }

  routeKeys(): readonly string[] {
    return this.router.routeKeys();
  }

  stats(): StatsSnapshot {
    return { total: this.total, routes: Object.fromEntries(this.counts) };
  }

  resetStats(): void {
    this.counts.clear();
    this.total = 0;
  }

  reset(): void {
    this.engine.reset();
    this.resetStats();
    this.faults.clear();
    this.idempotency.clear();
    this.seeded.clear();
    this.revoked.clear();
  }

  revokeKey(apiKey: string): void {
    this.revoked.add(apiKey);
  }

  restoreKeys(): void {
    this.revoked.clear();
  }

  seedDemo(apiKey = DEMO_API_KEY): string {
    return seedDemo(this.engine, this.seeded, apiKey);
  }

  /** Validates like `POST /_emulator/faults`; throws ApiError(400). */
  addFault(input: unknown) {
    const parsed = faultSpecSchema.safeParse(input);
    if (!parsed.success) {
      const errors: Record<string, string[]> = {};
      for (const issue of parsed.error.issues) (errors[issue.path.join('.') || 'fault'] ??= []).push(issue.message);
      throw new ApiError(400, 'Invalid fault', errors);
    }
    const spec = parsed.data;
    if (spec.route !== '*' && !this.knownRoutes.has(spec.route)) {
      throw new ApiError(400, 'Invalid fault', { route: [`unknown route "${spec.route}"; see GET /_emulator/routes`] });
    }
    return this.faults.add(spec);
  }

  close(): void {
    this.delays.clear();
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const search = q === -1 ? '' : rawUrl.slice(q + 1);
    const method = req.method ?? 'GET';
    let work: Promise<void>;
    if (path.startsWith('/v1/') || path === '/v1') work = this.api(req, res, method, path, search);
    else if (path === CONSOLE_PATH && method === 'GET' && this.engine.options.console) {
      // The page holds no data and no token: it reads the token from the URL's fragment and calls the admin API.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(consolePage());
      work = Promise.resolve();
    } else if (path.startsWith('/_emulator/')) {
      work = adminAllowed(this.engine, req) ? handleAdmin(this, req, res, method, path) : Promise.resolve(void sendJson(res, 401, { message: 'Admin token required', errors: {} }));
    }
    else if (path === '/healthz') work = Promise.resolve(void sendJson(res, 200, this.engine.options.liveRehearsal ? { status: 'ok', liveRehearsal: true } : { status: 'ok' }));
    else if (path.startsWith('/checkout/') || path.startsWith('/receipts/')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Sandbox</title><p>Payments emulator: sandbox page. Nothing to pay here.</p>');
      work = Promise.resolve();
    } else work = Promise.resolve(void sendJson(res, 404, { message: `No route for ${method} ${path}`, errors: {} }));
    work.catch((e: unknown) => {
      this.engine.options.logger?.error({ err: e instanceof Error ? e.message : String(e) }, 'emulator request failed');
      if (!res.headersSent) sendJson(res, 500, { message: 'Internal emulator error', errors: {} });
      else res.destroy();
    });
  };

  private authenticate(header: string | undefined): AuthResult {
    const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    const key = m?.[1];
    if (key === undefined) {
      return { error: new ApiError(401, 'Missing or malformed Authorization header', { authorization: ['expected "Bearer sk_sandbox_..."'] }) };
    }
    const live = key.startsWith('sk_live_');
    if (live && !this.engine.options.liveRehearsal) {
      return {
        error: new ApiError(401, 'Live keys are not accepted by the sandbox', {
          authorization: ['use a sk_sandbox_ key, or start the emulator with EMULATOR_LIVE_REHEARSAL=true to rehearse the live path'],
        }),
      };
    }
    const prefix = live ? 'sk_live_' : 'sk_sandbox_';
    if (!key.startsWith(prefix) || key.length === prefix.length) {
      return { error: new ApiError(401, 'Invalid API key', { authorization: ['expected "Bearer sk_sandbox_..."'] }) };
    }
    if (this.revoked.has(key)) return { error: new ApiError(401, 'This API key was revoked', { authorization: ['use a current key'] }) };
    return { account: this.engine.accountFor(key) };
  }

  private async api(req: IncomingMessage, res: ServerResponse, method: string, path: string, search: string): Promise<void> {
    const started = Date.now();
    const match = this.router.match(method, path);
    const routeKey = match ? match.key : `${method} ${UNMATCHED}`;
    this.total++;
    this.counts.set(routeKey, (this.counts.get(routeKey) ?? 0) + 1);

    const { latencyMs, latencyJitterMs } = this.engine.options;
    const fault = this.faults.pick(routeKey);
    const delay = latencyMs + (latencyJitterMs > 0 ? Math.random() * latencyJitterMs : 0) + (fault?.latencyMs ?? 0);
    if (delay > 0) await this.delays.sleep(delay);
    if (fault) {
      if (fault.reset) {
        req.socket.destroy();
        return;
      }
      if (fault.hang) return; // never answered; stop() closes the socket
      if (fault.malformed) {
        sendJson(res, 200, malformedBody(routeKey));
        return;
      }
      if (fault.status !== undefined) {
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers['retry-after'] = String(Math.ceil(fault.retryAfter));
        sendJson(res, fault.status, fault.body ?? { message: `Injected fault: HTTP ${fault.status}`, errors: {} }, headers);
        return;
      }
    }

    let raw = '';
    let reply: Reply;
    let account: AccountRow | undefined;
    let body: unknown = {};
    let replayed = false;
    try {
      raw = await readRawBody(req);
      const auth = this.authenticate(req.headers.authorization);
      if ('error' in auth) throw auth.error;
      account = auth.account;
      if (!match) throw new ApiError(404, `No route for ${method} ${path}`, {});
      body = parseBody(raw, req.headers['content-type']);
      const idemHeader = req.headers['idempotency-key'];
      const idemKey = method !== 'GET' && typeof idemHeader === 'string' && idemHeader !== '' ? `${account.id} ${method} ${path} ${idemHeader}` : undefined;
      const previous = idemKey === undefined ? undefined : this.idempotency.get(idemKey);
      if (previous) {
        replayed = true;
        res.writeHead(previous.status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(previous.text), 'idempotent-replayed': 'true' });
        res.end(previous.text);
        this.writeLog(account, req, method, path, search, body, previous.status, previous.text, routeKey);
        return;
      }
      try {
        reply = match.handler({ engine: this.engine, account, params: match.params, query: parseQuery(search), body, headers: req.headers });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        reply = { status: e.status, body: e.toBody() };
      }
      const text = sendJson(res, reply.status, reply.body);
      if (idemKey !== undefined) this.remember(idemKey, reply.status, text);
      this.writeLog(account, req, method, path, search, body, reply.status, SECRET_RESPONSES.has(routeKey) ? JSON.stringify(redact(reply.body)) : text, routeKey);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const text = sendJson(res, e.status, e.toBody());
      if (account) this.writeLog(account, req, method, path, search, body, e.status, text, routeKey);
    } finally {
      if (!replayed) this.engine.options.logger?.debug({ method, route: routeKey, status: res.statusCode, ms: Date.now() - started }, 'request');
    }
  }

  private remember(key: string, status: number, text: string): void {
    if (status >= 500) return;
    this.idempotency.set(key, { status, text });
    if (this.idempotency.size > MAX_IDEMPOTENCY_RECORDS) {
      const oldest = this.idempotency.keys().next().value;
      if (oldest !== undefined) this.idempotency.delete(oldest);
    }
  }

  private writeLog(account: AccountRow, req: IncomingMessage, method: string, path: string, search: string, body: unknown, status: number, response: string, _routeKey: string): void {
    const engine = this.engine;
    const now = engine.now();
    const hasBody = body !== null && typeof body === 'object' && Object.keys(body).length > 0;
    const source = req.headers['x-source'];
    engine.logs.insert({
      id: engine.nextId('log'),
      account_id: account.id,
      method,
      url: search === '' ? path : `${path}?${search}`,
      status,
      ip_address: req.socket.remoteAddress ?? '',
      version: 'v1',
      source: typeof source === 'string' && source !== '' ? source : 'api',
      query: search,
      body: hasBody ? JSON.stringify(redact(body)) : '',
      response: response.length > MAX_LOGGED_CHARS ? `${response.slice(0, MAX_LOGGED_CHARS)}...[truncated]` : response,
      created_at: now,
      updated_at: now,
    });
    engine.logs.trim(account.id, engine.options.maxLogsPerAccount);
  }
}
