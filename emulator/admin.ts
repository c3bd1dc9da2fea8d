/**
 * The admin API under /_emulator/ (never under /v1, never counted in stats):
 * stats, faults, reset, seed, webhook deliveries, moving an object's status
 * by hand, and what the console lists. Guarded by x-emulator-admin-token
 * when the emulator has one (the embedded emulator always does).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from './engine.js';
import { ApiError } from './errors.js';
import type { Fault, Faults } from './faults.js';
import { parseBody, readRawBody } from './http/body.js';
import { setPayoutStatus } from './resources/payouts.js';
import { setTransactionStatus } from './resources/transactions.js';
import { DEMO_API_KEY } from './seed.js';
import type { PayoutRow, TransactionRow } from './store.js';

/** What the admin API needs of the emulator app (kept as an interface so server.ts and this file do not import each other). */
export interface AdminHost {
  readonly engine: Engine;
  readonly faults: Faults;
  stats(): unknown;
  resetStats(): void;
  reset(): void;
  seedDemo(apiKey: string): string;
  revokeKey(apiKey: string): void;
  restoreKeys(): void;
  addFault(input: unknown): Fault;
  routeKeys(): readonly string[];
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** Payout statuses still waiting on the mobile-money operator. */
const PAYOUT_WAITING = new Set(['pending', 'scheduled', 'started', 'processing']);
const PENDING_LISTED = 50;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): string {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
  return text;
}

/** Constant-time check of the admin token, when the emulator has one. */
export function adminAllowed(engine: Engine, req: IncomingMessage): boolean {
  const expected = engine.options.adminToken;
  if (expected === undefined) return true;
  const given = req.headers['x-emulator-admin-token'];
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Sets an object's status as the payer's phone or the mode would, with the
 * same timestamps, events and webhooks; any string is accepted, so tests can
 * also show what the gateway does with a status it does not know.
 */
function moveStatus(engine: Engine, kind: 'transactions' | 'payouts', id: number, body: unknown): unknown {
  const { status, errorCode } = (body ?? {}) as { status?: unknown; errorCode?: unknown };
  if (typeof status !== 'string' || !/^[a-z_]{1,40}$/.test(status)) {
    throw new ApiError(400, 'Invalid status', { status: ['must be a lowercase status name'] });
  }
  const code = typeof errorCode === 'string' ? errorCode : null;
  const row = kind === 'transactions' ? engine.transactions.get(id) : engine.payouts.get(id);
  if (!row) throw new ApiError(404, `No such ${kind.slice(0, -1)}`, {});
  if (kind === 'transactions') setTransactionStatus(engine, row as TransactionRow, status, code);
  else setPayoutStatus(engine, row as PayoutRow, status, code);
  return row;
}

/** Transactions and payouts still waiting for an outcome, newest first, across accounts. */
function pending(engine: Engine) {
  const newestFirst = <T extends { id: number }>(rows: Iterable<T>) => [...rows].sort((a, b) => b.id - a.id).slice(0, PENDING_LISTED);
  const email = (customerId: number | null) => (customerId === null ? null : (engine.customers.get(customerId)?.email ?? null));
  const iso = (currencyId: number) => engine.currencies.get(currencyId)?.iso ?? null;
  const transactions = newestFirst([...engine.transactions.everyRow()].filter((t) => t.status === 'pending')).map((t) => ({
    id: t.id,
    status: t.status,
    amount: t.amount,
    currency: iso(t.currency_id),
    description: t.description,
    customer: email(t.customer_id),
    created_at: t.created_at,
  }));
  const payouts = newestFirst([...engine.payouts.everyRow()].filter((p) => PAYOUT_WAITING.has(p.status))).map((p) => ({
    id: p.id,
    status: p.status,
    amount: p.amount,
    currency: iso(p.currency_id),
    customer: email(p.customer_id),
    created_at: p.created_at,
  }));
  return { transactions, payouts };
}

/** A fixed admin route's answer: its status and JSON body. */
type AdminReply = [status: number, body: unknown];

/** The admin routes without a parameter in their path, by `METHOD /path`. */
const FIXED_ROUTES: Readonly<Record<string, (host: AdminHost, raw: string) => AdminReply>> = {
  'GET /_emulator/stats': (host) => [200, host.stats()],
  'DELETE /_emulator/stats': (host) => {
    host.resetStats();
    return [200, host.stats()];
  },
  'GET /_emulator/faults': (host) => [200, { faults: host.faults.all() }],
  'POST /_emulator/faults': (host, raw) => {
    const fault = host.addFault(parseBody(raw, 'application/json'));
    return [201, { id: fault.id, fault }];
  },
  'DELETE /_emulator/faults': (host) => {
    host.faults.clear();
    return [200, { faults: [] }];
  },
  'POST /_emulator/reset': (host) => {
    host.reset();
    return [200, { reset: true }];
  },
  'POST /_emulator/seed': (host, raw) => [201, { apiKey: host.seedDemo(seedKey(raw)) }],
  // The key's account and objects stay; only the key stops working, as when a merchant rolls a leaked key.
  'POST /_emulator/keys/revoke': (host, raw) => {
    const key = seedKey(raw);
    host.revokeKey(key);
    return [200, { revoked: true }];
  },
  'DELETE /_emulator/keys/revoked': (host) => {
    host.restoreKeys();
    return [200, { revoked: [] }];
  },
  'GET /_emulator/deliveries': (host) => [200, { deliveries: host.engine.dispatcher.deliveries() }],
  'DELETE /_emulator/deliveries': (host) => {
    host.engine.dispatcher.clearRecords();
    return [200, { deliveries: [] }];
  },
  'GET /_emulator/routes': (host) => [200, { routes: host.routeKeys() }],
  'GET /_emulator/pending': (host) => [200, pending(host.engine)],
};

/** The sandbox key a seed body names (`apiKey` or `api_key`), or the demo key. */
function seedKey(raw: string): string {
  const b = parseBody(raw, 'application/json') as { apiKey?: unknown; api_key?: unknown };
  const key = typeof b.apiKey === 'string' ? b.apiKey : typeof b.api_key === 'string' ? b.api_key : DEMO_API_KEY;
  if (!key.startsWith('sk_sandbox_') || key.length === 'sk_sandbox_'.length) {
    throw new ApiError(400, 'Invalid key', { apiKey: ['must start with sk_sandbox_'] });
  }
  return key;
}

export async function handleAdmin(host: AdminHost, req: IncomingMessage, res: ServerResponse, method: string, path: string): Promise<void> {
  const raw = await readRawBody(req).catch(() => '');
  const route = `${method} ${path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path}`;
  const { engine } = host;
  try {
    if (Object.hasOwn(FIXED_ROUTES, route)) {
      const [status, body] = FIXED_ROUTES[route]!(host, raw);
      sendJson(res, status, body);
      return;
    }
    const moved = /^POST \/_emulator\/(transactions|payouts)\/(\d+)\/status$/.exec(route);
    if (moved) {
      sendJson(res, 200, moveStatus(engine, moved[1] as 'transactions' | 'payouts', Number(moved[2]), parseBody(raw, 'application/json')));
      return;
    }
    const m = /^DELETE \/_emulator\/faults\/(\d+)$/.exec(route);
    if (m) {
      const removed = host.faults.remove(Number(m[1]));
      sendJson(res, removed ? 200 : 404, removed ? { removed: Number(m[1]) } : { message: 'No such fault', errors: {} });
      return;
    }
    sendJson(res, 404, { message: `No admin route ${route}`, errors: {} });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    sendJson(res, e.status, e.toBody());
  }
}
