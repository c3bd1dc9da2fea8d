/**
 * A stand-in for a router's side of the HTTP callback protocol for GraphQL
 * subscriptions, written from the protocol's text: it registers a
 * subscription (an id, a verifier, a callback URL under its path), then
 * answers the subgraph's POSTs to that URL: `check` with 204 and
 * `subscription-protocol: callback/1.0`, `next` and `complete` with 200 (the
 * complete one ends the subscription); 404 for an id it does not hold or has
 * dropped; 400 for a wrong verifier or action. Every POST it receives is
 * recorded, so a test can say exactly what reached it. It also sends the
 * router's own POST to the subgraph, as Apollo Router does in callback mode.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CallbackMessage {
  id: string;
  action: string;
  verifier: string;
  payload?: { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  /** The `subscription-protocol` header the subgraph sent. */
  protocol: string | undefined;
  /** The status this router answered. */
  answered: number;
  at: number;
}

interface Held {
  verifier: string;
  /** The router dropped it: every later message gets 404. */
  dropped: boolean;
  /** How `check` is answered: right, with a 400, a 204 without the protocol header, never, or a redirect to `redirectTo`. */
  check: 'ok' | 'refuse' | 'no-header' | 'hang' | 'redirect';
  redirectTo?: string;
  /** Each `next` is answered this late (a slow router). */
  nextDelayMs: number;
  /** `check` is answered this late (a router mid-handshake). */
  checkDelayMs: number;
  /** `next` is answered 500 (a router failing). */
  nextFails: boolean;
}

export interface Registration {
  callbackUrl: string;
  subscriptionId: string;
  verifier: string;
}

export interface CallbackRouter {
  url: string;
  /** Every message received, in order. */
  received: CallbackMessage[];
  register(options?: Partial<Pick<Held, 'check' | 'nextDelayMs' | 'checkDelayMs' | 'nextFails' | 'redirectTo'>>): Registration;
  /** The router terminates the subscription: from now on it answers 404. */
  drop(id: string): void;
  messages(id: string, action?: string): CallbackMessage[];
  /** Resolves once `ok` holds for the subscription's messages, or rejects after `timeoutMs`. */
  waitFor(id: string, ok: (messages: CallbackMessage[]) => boolean, timeoutMs?: number): Promise<CallbackMessage[]>;
  /** The router's POST of a subscription to the subgraph, with the caller's Authorization forwarded. */
  subscribe(gatewayUrl: string, key: string | null, query: string, registration: Registration, options?: { variables?: Record<string, unknown>; heartbeatIntervalMs?: number; headers?: Record<string, string> }): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } }>;
  close(): Promise<void>;
}

export const CALLBACK_PATH = '/callback';

export async function startCallbackRouter(): Promise<CallbackRouter> {
  const held = new Map<string, Held>();
  const received: CallbackMessage[] = [];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, headers: Record<string, string> = {}, record?: Omit<CallbackMessage, 'answered' | 'at'>) => {
        if (record) received.push({ ...record, answered: status, at: Date.now() });
        res.writeHead(status, headers).end();
      };
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return answer(400);
      }
      const pathId = (req.url ?? '').slice(CALLBACK_PATH.length + 1);
      const record = {
        id: String(body.id),
        action: String(body.action),
        verifier: String(body.verifier),
        protocol: req.headers['subscription-protocol'] as string | undefined,
        ...(body.payload ? { payload: body.payload as CallbackMessage['payload'] } : {}),
        ...(body.errors ? { errors: body.errors as CallbackMessage['errors'] } : {}),
      };
      const subscription = held.get(record.id);
      if (req.method !== 'POST' || body.kind !== 'subscription' || pathId !== record.id) return answer(400, {}, record);
      if (!subscription || subscription.dropped) return answer(404, {}, record);
      if (record.verifier !== subscription.verifier) return answer(400, {}, record);
      switch (record.action) {
        case 'check':
          if (subscription.check === 'refuse') return answer(400, {}, record);
          if (subscription.check === 'hang') return void received.push({ ...record, answered: 0, at: Date.now() });
          if (subscription.check === 'redirect') return answer(307, { location: subscription.redirectTo ?? '/' }, record);
          if (subscription.checkDelayMs > 0) return void setTimeout(() => answer(204, { 'subscription-protocol': 'callback/1.0' }, record), subscription.checkDelayMs);
          return answer(204, subscription.check === 'ok' ? { 'subscription-protocol': 'callback/1.0' } : {}, record);
        case 'next':
          if (subscription.nextFails) return answer(500, {}, record);
          if (subscription.nextDelayMs > 0) return void setTimeout(() => answer(200, {}, record), subscription.nextDelayMs);
          return answer(200, {}, record);
        case 'complete':
          subscription.dropped = true;
          return answer(202, {}, record);
        default:
          return answer(400, {}, record);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const messages = (id: string, action?: string) => received.filter((m) => m.id === id && (action === undefined || m.action === action));

  return {
    url,
    received,
    register(options = {}) {
      const subscriptionId = randomUUID();
      const verifier = randomUUID();
      held.set(subscriptionId, { verifier, dropped: false, check: options.check ?? 'ok', nextDelayMs: options.nextDelayMs ?? 0, checkDelayMs: options.checkDelayMs ?? 0, nextFails: options.nextFails ?? false, ...(options.redirectTo ? { redirectTo: options.redirectTo } : {}) });
      return { callbackUrl: `${url}${CALLBACK_PATH}/${subscriptionId}`, subscriptionId, verifier };
    },
    drop(id) {
      const subscription = held.get(id);
      if (subscription) subscription.dropped = true;
    },
    messages,
    async waitFor(id, ok, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const list = messages(id);
        if (ok(list)) return list;
        if (Date.now() > until) throw new Error(`callback messages never matched; got ${JSON.stringify(list.map((m) => [m.action, m.answered, m.payload ?? m.errors ?? null]))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async subscribe(gatewayUrl, key, query, registration, options = {}) {
      const res = await fetch(gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json;callbackSpec=1.0', ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers },
        body: JSON.stringify({
          query,
          ...(options.variables ? { variables: options.variables } : {}),
          extensions: { subscription: { ...registration, heartbeatIntervalMs: options.heartbeatIntervalMs ?? 0 } },
        }),
      });
      return { status: res.status, body: (await res.json()) as never };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
