/**
 * The router's callback subscriptions (subscription-callback.ts) in process:
 * the URL allowlist on its own, then `open` with a small schema run by
 * graphql-js, a fake admission and a bare HTTP server for the router's
 * callback URL — each refusal, the check handshake, and a subscription's
 * life to its end (events, revocation, shutdown).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, GraphQLError, parse, type GraphQLFieldConfig } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callbackAllowed, createCallbackSubscriptions, MAX_HEARTBEAT_MS, MIN_HEARTBEAT_MS, type CallbackAnswer, type CallbackDeps } from '../../../src/http/subscription-callback.js';
import type { Admission, Caller, RateRefusal } from '../../../src/limits/admission.js';
import { UpstreamAuthenticationError, UpstreamPermissionError, UpstreamRouteMissingError, UpstreamServerError } from '../../../src/upstream/errors.js';

const ALLOWED = 'http://router.test/callback/';

describe('callbackAllowed', () => {
  it.each([
    ['a plain id under the prefix', `${ALLOWED}sub-1`, `${ALLOWED}sub-1`],
    ['several plain segments', `${ALLOWED}a/b.c~d_e`, `${ALLOWED}a/b.c~d_e`],
    ['the host in capitals, normalised', 'http://ROUTER.test/callback/sub-1', `${ALLOWED}sub-1`],
    ['a dot segment that stays under the prefix, normalised', `${ALLOWED}x/../sub-1`, `${ALLOWED}sub-1`],
  ])('allows %s', (_label, raw, href) => {
    expect(callbackAllowed(raw, [ALLOWED])).toBe(href);
  });

  it.each([
    // Long enough that the normalised URL is longer than the prefix: a check of the raw string would let it through.
    ['a dot segment leaving the prefix for a longer path', `${ALLOWED}../admin/xyzw`],
    ['a dot segment leaving the prefix', `${ALLOWED}../admin`],
    ['the prefix as part of a longer segment', 'http://router.test/callbacks/x'],
    ['the prefix alone', ALLOWED],
    ['an empty segment', `${ALLOWED}a//b`],
    ['an encoded slash', `${ALLOWED}..%2fadmin`],
    ['a query', `${ALLOWED}x?next=/admin`],
    ['an empty query', `${ALLOWED}x?`],
    ['a fragment', `${ALLOWED}x#admin`],
    ['an empty fragment', `${ALLOWED}x#`],
    ['credentials', 'http://user:pw@router.test/callback/x'],
    ['a user name only', 'http://user@router.test/callback/x'],
    ['another scheme', 'ftp://router.test/callback/x'],
    ['something that is not a URL', 'not a url'],
    ['another host', 'http://evil.test/callback/x'],
  ])('refuses %s', (_label, raw) => {
    expect(callbackAllowed(raw, [ALLOWED])).toBeNull();
  });

  it('takes https prefixes too, and any of several', () => {
    expect(callbackAllowed('https://b.test/cb/x', ['http://a.test/cb/', 'https://b.test/cb/'])).toBe('https://b.test/cb/x');
  });

  it('refuses a URL over 2048 characters, and allows one at 2048', () => {
    const fill = (length: number) => `${ALLOWED}${'a'.repeat(length - ALLOWED.length)}`;
    expect(callbackAllowed(fill(2048), [ALLOWED])).toBe(fill(2048));
    expect(callbackAllowed(fill(2049), [ALLOWED])).toBeNull();
  });
});

// ---- open(), over a stand-in for the router's callback URL ----

interface Message {
  path: string;
  action: string;
  id: string;
  verifier: string;
  payload?: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}
/** How the stand-in answers `check`. */
let checkReply: { status: number; protocol?: string | null } = { status: 204 };
let messages: Message[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = { path: req.url ?? '', ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<Message, 'path'>) };
      messages.push(message);
      if (message.action !== 'check') return void res.writeHead(200).end();
      const protocol = checkReply.protocol === undefined ? 'callback/1.0' : checkReply.protocol;
      res.writeHead(checkReply.status, protocol === null ? {} : { 'subscription-protocol': protocol }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  messages = [];
  checkReply = { status: 204 };
});

const schema = buildSchema('type Query { ok: Boolean } type Subscription { ticks(n: Int!): Int refused: Int }');
const fields = schema.getSubscriptionType()!.getFields() as unknown as Record<string, GraphQLFieldConfig<unknown, unknown, { n: number }>>;
/** Ticks until `n`, then waits until the stream is ended (the subscription's own events stay open). */
fields.ticks!.subscribe = async function* (_root, { n }) {
  for (let i = 1; i <= n; i++) yield i;
  await new Promise(() => {});
};
fields.ticks!.resolve = (value) => value;
fields.refused!.subscribe = () => {
  throw new GraphQLError('Not yours.', { extensions: { code: 'FORBIDDEN' } });
};

const caller = (n = 1): Caller => ({ apiKey: `sk_sandbox_key${n}`, callerId: `caller-${n}` });
const TICKS = 'subscription { ticks(n: 2) }';

interface World {
  subs: ReturnType<typeof createCallbackSubscriptions>;
  logs: { level: string; fields: Record<string, unknown>; message: string }[];
  /** The revocation callbacks `live` was given, and how many releases were called. */
  live: { ends: (() => void)[]; released: number };
  admission: { limited: RateRefusal | null; account: () => Promise<number> };
  open(extension?: Record<string, unknown>, over?: { query?: string; who?: Caller | null; fromRouter?: boolean }): Promise<CallbackAnswer>;
}

let subscriptionSeq = 0;
function world(config: { allowed?: string[]; max?: number; perKey?: number; routerSecret?: string | null } = {}): World {
  const logs: World['logs'] = [];
  const log = (level: string) => (fields: Record<string, unknown>, message: string) => void logs.push({ level, fields, message });
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
  const telemetry = new Proxy({ requestId: 'req-1' } as Record<string | symbol, unknown>, { get: (t, p) => (p in t ? t[p] : p === 'then' ? undefined : () => undefined) });
  const live: World['live'] = { ends: [], released: 0 };
  const state: World['admission'] = { limited: null, account: async () => 42 };
  const admission = {
    documents: { maxResponseBytes: 1_000_000 },
    stream: async () => state.limited,
    document: (body: Record<string, unknown>) => {
      const query = body.query as string;
      if (query.includes('tooDeep')) return { errors: [new GraphQLError('Too deep.', { extensions: { code: 'DEPTH_LIMIT' } })] };
      return { document: parse(query), source: query };
    },
    account: () => state.account(),
    live: (_caller: Caller, end: () => void) => {
      live.ends.push(end);
      return () => void live.released++;
    },
  } as unknown as Admission;
  const deps: CallbackDeps = {
    schema,
    bus: {} as CallbackDeps['bus'],
    reconciler: {} as CallbackDeps['reconciler'],
    queueLimit: 8,
    admission,
    formatError: (formatted) => ({ ...formatted, extensions: { ...formatted.extensions, formatted: true } }),
    context: {
      config: {
        graphql: { subscriptionCallbacks: { allowed: config.allowed ?? [base], timeoutMs: 2_000, max: config.max ?? 3 }, routerSharedSecret: config.routerSecret ?? null },
        limits: { trustedProxies: [], ws: { maxSubscriptionsPerKey: config.perKey ?? 2 }, maxUpstreamCalls: 10 },
        operationDeadlineMs: 5_000,
        pagination: {},
        idempotency: {},
      },
      logger,
      observability: { startOperation: () => telemetry, subscriptionStarted: () => {}, loadersFor: () => undefined, idempotency: () => {} },
      keys: { isProven: () => true },
      upstream: { forKey: () => ({}) },
      entityCache: { scope: () => ({}) },
      idempotencyStore: {},
    } as unknown as CallbackDeps['context'],
  };
  const subs = createCallbackSubscriptions(deps);
  const req = { headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as http.IncomingMessage;
  return {
    subs,
    logs,
    live,
    admission: state,
    open(extension = {}, over = {}) {
      const id = `sub-${++subscriptionSeq}`;
      const subscription = { callbackUrl: `${base}${id}`, subscriptionId: id, verifier: `v-${id}`, heartbeatIntervalMs: 0, ...extension };
      const body = { query: over.query ?? TICKS, extensions: { subscription } };
      return subs.open(req, body, over.who === undefined ? caller() : over.who, over.fromRouter ?? false);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(condition: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}
const reasonOf = (answer: CallbackAnswer) => ('extra' in answer ? answer.extra?.reason : undefined);

describe('open: refusals before anything is called', () => {
  it('is off without allowed URLs', async () => {
    const answer = await world({ allowed: [] }).open();
    expect(answer).toMatchObject({ status: 400, code: 'BAD_REQUEST', extra: { reason: 'CALLBACKS_OFF' } });
    expect(messages).toEqual([]);
  });

  it('takes callbacks from the router only when the router is known', async () => {
    const w = world({ routerSecret: 'shared' });
    expect(await w.open()).toMatchObject({ status: 403, code: 'FORBIDDEN', extra: { reason: 'NOT_FROM_ROUTER' } });
    expect(messages).toEqual([]);
    const answer = await w.open({}, { fromRouter: true });
    expect(answer.status).toBe(200);
    await w.subs.close();
  });

  it.each([
    ['no callbackUrl', { callbackUrl: undefined }],
    ['an empty subscriptionId', { subscriptionId: '' }],
    ['a verifier that is not a string', { verifier: 7 }],
    ['a verifier over 512 characters', { verifier: 'v'.repeat(513) }],
    ['a subscriptionId over 512 characters', { subscriptionId: 's'.repeat(513) }],
    ['a callbackUrl over 2048 characters', { callbackUrl: `${'x'.repeat(2049)}` }],
  ])('refuses an extension with %s', async (_label, extension) => {
    const answer = await world().open(extension);
    expect(answer).toMatchObject({ status: 400, code: 'BAD_REQUEST', extra: { reason: 'CALLBACK_EXTENSION_INVALID' } });
    expect((answer as { message: string }).message).toBe('extensions.subscription needs callbackUrl (at most 2048 characters), subscriptionId and verifier (at most 512 each).');
    expect(messages).toEqual([]);
  });

  it('refuses a subscription extension that is not an object', async () => {
    const w = world();
    const req = { headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as http.IncomingMessage;
    const answer = await w.subs.open(req, { query: TICKS, extensions: { subscription: 'yes' } }, caller(), false);
    expect(reasonOf(answer)).toBe('CALLBACK_EXTENSION_INVALID');
  });

  it.each([[MIN_HEARTBEAT_MS - 1], [MAX_HEARTBEAT_MS + 1], [1_000.5], ['1000'], [-1]])('refuses a heartbeat interval of %s', async (heartbeatIntervalMs) => {
    const answer = await world().open({ heartbeatIntervalMs });
    expect(answer).toMatchObject({ status: 400, extra: { reason: 'CALLBACK_EXTENSION_INVALID' } });
    expect((answer as { message: string }).message).toBe('extensions.subscription.heartbeatIntervalMs must be 0 (no heartbeats) or from 500 to 3600000.');
  });

  it.each([[MIN_HEARTBEAT_MS], [MAX_HEARTBEAT_MS], [undefined]])('takes a heartbeat interval of %s', async (heartbeatIntervalMs) => {
    const w = world();
    const answer = await w.open({ heartbeatIntervalMs });
    expect(answer.status).toBe(200);
    await w.subs.close();
  });

  it('refuses a callbackUrl leaving the allowed prefix through a dot segment, without calling anything', async () => {
    const answer = await world().open({ callbackUrl: `${base}../admin/xyzw` });
    expect(answer).toMatchObject({ status: 400, code: 'BAD_REQUEST', extra: { reason: 'CALLBACK_URL_NOT_ALLOWED' } });
    expect(messages).toEqual([]);
  });

  it('calls the normalised URL the allowlist checked', async () => {
    const w = world();
    const answer = await w.open({ callbackUrl: `${base}x/../sub-normal` });
    expect(answer.status).toBe(200);
    expect(messages.map((m) => m.path)).toEqual(['/callback/sub-normal']);
    await w.subs.close();
  });

  it("wants the caller's key", async () => {
    const answer = await world().open({}, { who: null });
    expect(answer).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect((answer as { message: string }).message).toMatch(/Authorization: Bearer/);
  });

  it.each([
    ['key', 'with this API key'],
    ['address', 'from this address'],
  ] as const)('answers 429 when the %s opened too many', async (by, whose) => {
    const w = world();
    w.admission.limited = { retryAfterSeconds: 7, by };
    const answer = await w.open();
    expect(answer).toEqual({ status: 429, message: `Too many subscriptions opened ${whose}; retry later.`, code: 'RATE_LIMITED', retryAfterSeconds: 7, extra: { retryAfterSeconds: 7 } });
    expect(messages).toEqual([]);
  });

  it("answers a document's first refusal, formatted", async () => {
    const answer = await world().open({}, { query: 'subscription tooDeep { ticks(n: 1) }' });
    expect(answer).toEqual({ status: 400, message: 'Too deep.', code: 'DEPTH_LIMIT' });
  });

  it('takes subscriptions only', async () => {
    const answer = await world().open({}, { query: '{ ok }' });
    expect(answer).toMatchObject({ status: 400, extra: { reason: 'NOT_A_SUBSCRIPTION' } });
    expect(messages).toEqual([]);
  });
});

describe('open: the caps, the account and the check', () => {
  it('holds each key to its live subscriptions, and the instance to its total', async () => {
    const w = world({ perKey: 2, max: 3 });
    expect((await w.open()).status).toBe(200);
    expect((await w.open()).status).toBe(200);
    expect(await w.open()).toEqual({ status: 429, message: 'At most 2 live callback subscriptions per API key.', code: 'RATE_LIMITED' });
    expect((await w.open({}, { who: caller(2) })).status).toBe(200);
    expect(await w.open({}, { who: caller(3) })).toMatchObject({ status: 503, code: 'SUBSCRIPTIONS_FULL' });
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 3 }); // live, waiting for started()
    await w.subs.close();
  });

  it.each([
    ['the key refused', new UpstreamAuthenticationError({ route: 'GET /v1/accounts' }), 401, 'UNAUTHENTICATED'],
    ['permission refused', new UpstreamPermissionError({ route: 'GET /v1/accounts' }), 403, 'FORBIDDEN'],
    ['the route missing', new UpstreamRouteMissingError({ route: 'GET /v1/accounts', beyondSpec: false }), 502, 'UPSTREAM_UNSUPPORTED'],
    ['the upstream failing', new UpstreamServerError({ route: 'GET /v1/accounts' }), 503, 'UPSTREAM_UNAVAILABLE'],
  ])('answers %s at the account lookup, and frees the slot', async (_label, error, status, code) => {
    const w = world({ perKey: 1, max: 1 });
    w.admission.account = () => Promise.reject(error);
    expect(await w.open()).toMatchObject({ status, code });
    expect(messages).toEqual([]);
    w.admission.account = async () => 42;
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });

  it('logs an unexpected account failure by its message only', async () => {
    const w = world();
    w.admission.account = () => Promise.reject(new UpstreamServerError({ route: 'GET /v1/accounts' }));
    await w.open();
    expect(w.logs).toEqual([{ level: 'warn', fields: { err: { message: 'Upstream server error on GET /v1/accounts' } }, message: 'callback subscription refused: account lookup failed' }]);
  });

  it.each([
    ['a refusal', { status: 500 }, 'answered 500'],
    ['a 200 instead of 204', { status: 200 }, 'answered 200, not 204'],
    ['a 204 without the protocol', { status: 204, protocol: null }, 'answered without "subscription-protocol: callback/1.0"'],
    ['a 204 with another protocol', { status: 204, protocol: 'callback/2.0' }, 'answered without "subscription-protocol: callback/1.0"'],
  ])('starts nothing when the check gets %s, frees the slot and tells the operator why', async (_label, reply, detail) => {
    checkReply = reply;
    const w = world({ perKey: 1, max: 1 });
    const answer = await w.open();
    expect(answer).toEqual({ status: 400, message: 'The callback check failed: no subscription was started.', code: 'BAD_REQUEST', extra: { reason: 'CALLBACK_CHECK_FAILED' } });
    expect(messages.map((m) => m.action)).toEqual(['check']);
    const origin = new URL(base).origin;
    expect(w.logs).toEqual([{ level: 'info', fields: { callerId: 'caller-1', detail, origin }, message: 'callback subscription refused: the check failed' }]);
    checkReply = { status: 204 };
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });
});

describe('open: a subscription', () => {
  it('checks, answers {"data":null}, sends events once started, and completes when revoked', async () => {
    const w = world({ perKey: 1 });
    const answer = await w.open();
    expect(answer).toMatchObject({ status: 200, result: { data: null } });
    const [check] = messages;
    expect(check).toMatchObject({ action: 'check', id: `sub-${subscriptionSeq}`, verifier: `v-sub-${subscriptionSeq}` });
    await sleep(30);
    expect(messages).toHaveLength(1); // nothing before started()
    (answer as { started: () => void }).started();
    await until(() => messages.length === 3);
    expect(messages.slice(1).map((m) => [m.action, m.payload])).toEqual([
      ['next', { data: { ticks: 1 } }],
      ['next', { data: { ticks: 2 } }],
    ]);
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 1 });
    expect(w.live.ends).toHaveLength(1);
    w.live.ends[0]!();
    await until(() => messages.some((m) => m.action === 'complete'));
    expect(messages.at(-1)!.errors).toEqual([{ message: 'The payments API revoked this API key: the subscription is closed.', extensions: { code: 'UNAUTHENTICATED' } }]);
    await until(() => w.subs.stats().callbackSubscriptions === 0);
    expect(w.live.released).toBe(1);
    // Its slot is free again.
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });

  it("answers a resolver's refusal with its errors, and completes the id the router registered", async () => {
    const w = world({ perKey: 1 });
    const answer = await w.open({}, { query: 'subscription { refused }' });
    const errors = [{ message: 'Not yours.', locations: [{ line: 1, column: 16 }], path: ['refused'], extensions: { code: 'FORBIDDEN', formatted: true, requestId: 'req-1' } }];
    expect(answer).toEqual({ status: 200, result: { data: null, errors } });
    expect(messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(messages[1]!.errors).toEqual(errors);
    expect((await w.open()).status).toBe(200);
    await w.subs.close();
  });

  it('ends every live subscription with SHUTTING_DOWN on close, and opens none after', async () => {
    const w = world();
    const answer = await w.open();
    (answer as { started: () => void }).started();
    await until(() => messages.length === 3);
    await w.subs.close();
    expect(messages.at(-1)).toMatchObject({ action: 'complete', errors: [{ message: 'The gateway is shutting down: subscribe again.', extensions: { code: 'SHUTTING_DOWN' } }] });
    expect(w.subs.stats()).toEqual({ callbackSubscriptions: 0 });
    const count = messages.length;
    expect(await w.open()).toEqual({ status: 503, message: 'The gateway is shutting down: subscribe again.', code: 'SHUTTING_DOWN' });
    expect(messages).toHaveLength(count);
  });

  it('completes at once a subscription whose check was answered after close() began', async () => {
    const w = world();
    const opening = w.open();
    // close() while the check is in flight.
    const closing = w.subs.close();
    const answer = await opening;
    await closing;
    expect(answer).toMatchObject({ status: 503, code: 'SHUTTING_DOWN' });
    expect(messages.map((m) => m.action)).toEqual(['check', 'complete']);
    expect(messages[1]!.errors).toEqual([{ message: 'The gateway is shutting down: subscribe again.', extensions: { code: 'SHUTTING_DOWN' } }]);
  });
});
