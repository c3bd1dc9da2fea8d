/**
 * The set-up of subscription-callback.ts's unit tests: a bare HTTP server
 * standing in for the router's callback URL, a small schema run by
 * graphql-js, and `open` over a fake admission and context.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, GraphQLError, parse, type GraphQLFieldConfig } from 'graphql';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createCallbackSubscriptions, type CallbackAnswer, type CallbackDeps } from '../../../src/http/subscription-callback.js';
import type { Admission, Caller, RateRefusal } from '../../../src/access/admission.js';
import { streamDoor } from '../../../src/access/stream-admission.js';
import { overSize, tooLarge } from '../../../src/limits/response-size.js';
import type { Context } from '../../../src/context.js';

export interface Message {
  path: string;
  action: string;
  id: string;
  verifier: string;
  payload?: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}
/** The stand-in's state: what it received, and how it answers `check`, `next` and `complete`. */
export const router = {
  base: '',
  messages: [] as Message[],
  checkReply: { status: 204 } as { status: number; protocol?: string | null },
  nextStatus: 200,
  completeStatus: 200,
  /** While set, the stand-in answers `check` only once it resolves. */
  holdCheck: null as Promise<void> | null,
};
let server: http.Server;

/** Starts the stand-in for the suite, and forgets what it received before each test. */
export function useCallbackRouter(): void {
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = { path: req.url ?? '', ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<Message, 'path'>) };
      router.messages.push(message);
      if (message.action !== 'check') return void res.writeHead(message.action === 'next' ? router.nextStatus : router.completeStatus).end();
      const protocol = router.checkReply.protocol === undefined ? 'callback/1.0' : router.checkReply.protocol;
      const answer = () => void res.writeHead(router.checkReply.status, protocol === null ? {} : { 'subscription-protocol': protocol }).end();
      if (router.holdCheck) void router.holdCheck.then(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  router.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  router.messages = [];
  router.checkReply = { status: 204 };
  router.nextStatus = 200;
  router.completeStatus = 200;
  router.holdCheck = null;
  starts.gate = Promise.resolve();
});
}

export const schema = buildSchema('type Query { ok: Boolean } type Subscription { ticks(n: Int!): Int refused: Int fails: Int whoami: String events: Int late: Int lateEvents: Int }');
/** `late` starts its events only once `gate` resolves: graphql-js is still starting it until then. */
export const starts = { gate: Promise.resolve() };
const fields = schema.getSubscriptionType()!.getFields() as unknown as Record<string, GraphQLFieldConfig<unknown, unknown, { n: number }>>;
/** Ticks until `n`, then waits until the stream is ended (the subscription's own events stay open). */
fields.ticks!.subscribe = async function* (_root, { n }) {
  for (let i = 1; i <= n; i++) yield i;
  await new Promise(() => {});
};
fields.ticks!.resolve = (value) => value;
/** One event, then a failure that is not a GraphQLError (a bug in the stream). */
fields.fails!.subscribe = async function* () {
  yield 1;
  throw new Error('kaput');
};
fields.fails!.resolve = (value) => value;
/** What the subscription's context says: its account (from admission), its caller, and the account its caller record holds. */
fields.whoami!.subscribe = async function* (_root, _args, context) {
  const { realtime, callerId, caller } = context as { realtime?: { accountId: number }; callerId: string; caller?: { accountId: number | null } };
  yield `${realtime?.accountId}:${callerId}:${caller?.accountId}`;
  await new Promise(() => {});
};
fields.whoami!.resolve = (value) => value;
/** The events of the world's bus for the key's account (`World.emit`), through the subscription's bounded queue. */
fields.events!.subscribe = (_root, _args, context) => (context as Context).realtime!.events((event) => (event as unknown as { n: number }).n);
fields.events!.resolve = (value) => value;
fields.late!.subscribe = async function () {
  await starts.gate;
  return (async function* () {
    yield 1;
    await new Promise(() => {});
  })();
};
fields.late!.resolve = (value) => value;
/** Listens to the bus first, then waits for `gate` before graphql-js has the events (as a resolver that reads the upstream first). */
fields.lateEvents!.subscribe = async function (_root, _args, context) {
  const events = (context as Context).realtime!.events((event) => (event as unknown as { n: number }).n);
  await starts.gate;
  return events;
};
fields.lateEvents!.resolve = (value) => value;
fields.refused!.subscribe = () => {
  throw new GraphQLError('Not yours.', { extensions: { code: 'FORBIDDEN' } });
};

export const caller = (n = 1): Caller => ({ apiKey: `sk_sandbox_key${n}`, callerId: `caller-${n}` });
export const TICKS = 'subscription { ticks(n: 2) }';

export interface World {
  subs: ReturnType<typeof createCallbackSubscriptions>;
  logs: { level: string; fields: Record<string, unknown>; message: string }[];
  /** The errors the formatter was given, as thrown. */
  formatted: unknown[];
  /** The revocation callbacks `live` was given, and how many releases were called. */
  live: { ends: (() => void)[]; released: number };
  admission: { revoked: boolean; limited: RateRefusal | null; account: () => Promise<number>; streams: unknown[][] };
  /** Hands `event` to every subscription listening on the bus, synchronously (as the bus's fan-out does). */
  emit(event: unknown): void;
  /** How many subscriptions listen on the bus. */
  listening(): number;
  /** What the operation's telemetry was told, and what startOperation was given. */
  telemetry: { calls: [string, unknown[]][]; started: unknown[] };
  /** Makes building the operation's context throw (a bug), from now on. */
  breakContext(): void;
  open(extension?: Record<string, unknown>, over?: { query?: string; who?: Caller | null; fromRouter?: boolean; body?: Record<string, unknown> }): Promise<CallbackAnswer>;
}

let subscriptionSeq = 0;
export function world(config: { allowed?: string[]; max?: number; perKey?: number; routerSecret?: string | null } = {}): World {
  const logs: World['logs'] = [];
  const seen: unknown[] = [];
  const log = (level: string) => (fields: Record<string, unknown>, message: string) => void logs.push({ level, fields, message });
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
  const told: World['telemetry'] = { calls: [], started: [] };
  const telemetry = new Proxy({ requestId: 'req-1' } as Record<string | symbol, unknown>, {
    get: (t, p) => (p in t ? t[p] : p === 'then' ? undefined : (...args: unknown[]) => void told.calls.push([String(p), args])),
  });
  let broken = false;
  const live: World['live'] = { ends: [], released: 0 };
  const state: World['admission'] = { revoked: false, limited: null, account: async () => 42, streams: [] };
  const listeners = new Set<(event: never) => void>();
  const bus = { subscribe: (_accountId: number, listener: (event: never) => void) => (listeners.add(listener), () => void listeners.delete(listener)) };
  // The real sequence every stream is opened through, over fake steps.
  const door = streamDoor({
    isRevoked: () => state.revoked,
    maxPerKey: config.perKey ?? 2,
    stream: async (...args: unknown[]) => (state.streams.push(args), state.limited),
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
  });
  const admission = { documents: { overSize: (result: unknown) => overSize(result, 1_000_000), tooLarge: () => tooLarge(1_000_000) }, openStream: door.open } as unknown as Admission;
  const deps: CallbackDeps = {
    schema,
    bus: bus as unknown as CallbackDeps['bus'],
    reconciler: {} as CallbackDeps['reconciler'],
    queueLimit: 8,
    admission,
    formatError: (formatted, error) => (seen.push(error), { ...formatted, extensions: { ...formatted.extensions, formatted: true } }),
    context: {
      config: {
        graphql: { subscriptionCallbacks: { allowed: config.allowed ?? [router.base], timeoutMs: 2_000, max: config.max ?? 3 }, routerSharedSecret: config.routerSecret ?? null },
        limits: { trustedProxies: [], streams: { maxSubscriptionsPerKey: config.perKey ?? 2 }, maxUpstreamCalls: 10 },
        operationDeadlineMs: 5_000,
        pagination: {},
        idempotency: {},
      },
      logger,
      observability: { startOperation: (o: unknown) => (told.started.push(o), telemetry), subscriptionStarted: () => {}, loadersFor: () => undefined, idempotency: () => {} },
      keys: {
        isProven: () => {
          if (broken) throw new Error('context broken');
          return true;
        },
        isKnown: () => true,
      },
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
    formatted: seen,
    live,
    admission: state,
    telemetry: told,
    breakContext: () => void (broken = true),
    emit: (event) => listeners.forEach((listener) => listener(event as never)),
    listening: () => listeners.size,
    open(extension = {}, over = {}) {
      const id = `sub-${++subscriptionSeq}`;
      const subscription = { callbackUrl: `${router.base}${id}`, subscriptionId: id, verifier: `v-${id}`, heartbeatIntervalMs: 0, ...extension };
      const body = { query: over.query ?? TICKS, ...over.body, extensions: { subscription } };
      return subs.open(req, body, over.who === undefined ? caller() : over.who, over.fromRouter ?? false);
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export async function until(condition: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}
export const reasonOf = (answer: CallbackAnswer) => ('extra' in answer ? answer.extra?.reason : undefined);
