/**
 * GraphQL over WebSocket (graphql-ws protocol) on the HTTP server's /graphql
 * path, with the same schema, context shape and error mapping as HTTP.
 *
 * A connection authenticates once, in `connectionParams.authorization`, with
 * the same bearer key as HTTP; the account behind the key (asked upstream,
 * cached per caller) scopes every event the connection can see.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { readCaller, type Caller } from '../auth.js';
import type { Config } from '../config.js';
import type { Context } from '../context.js';
import type { CurrencyCatalog } from '../loaders/currency-catalog.js';
import { createLoaders } from '../loaders/index.js';
import type { Logger } from '../logger.js';
import type { PaymentsApi } from '../upstream/api.js';
import { UpstreamAuthenticationError, UpstreamPermissionError } from '../upstream/errors.js';
import { LRUCache } from 'lru-cache';
import type { EventBus } from './bus.js';
import type { PaymentEvent } from './events.js';
import { boundedStream } from './stream.js';

/** What a subscription resolver gets in its context (absent over HTTP). */
export interface RealtimeSource {
  /** The caller's account: the only one whose events reach this connection. */
  accountId: number;
  events<T>(select: (event: PaymentEvent) => T | null): AsyncIterableIterator<T>;
}

/** Close codes a client can act on (4xxx: application-defined, per RFC 6455). */
export const CloseCodes = {
  unauthorized: 4401,
  forbidden: 4403,
  tooSlow: 4429,
  tryAgainLater: 1013,
} as const;

export interface SubscriptionLimits {
  /** Events buffered per subscription before its connection is closed as too slow. */
  queueLimit: number;
  /** Unsent bytes on a socket beyond which it counts as congested. */
  maxBufferedBytes: number;
  maxSubscriptionsPerConnection: number;
}

export interface SubscriptionServerDeps {
  httpServer: http.Server;
  path: string;
  schema: GraphQLSchema;
  bus: EventBus;
  forKey(apiKey: string): PaymentsApi;
  config: Readonly<Config>;
  limits: SubscriptionLimits;
  logger: Logger;
  currencyCatalog: CurrencyCatalog;
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

export interface SubscriptionServer {
  /** Open WebSocket connections, live subscriptions on this instance, and connections closed for not reading. */
  stats(): { connections: number; subscriptions: number; closedTooSlow: number };
  close(): Promise<void>;
}

interface Session {
  caller: Caller;
  api: PaymentsApi;
  accountId: number;
}

const ACCOUNT_TTL_MS = 10 * 60_000;
/** Incoming messages are subscribe requests: small. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** How long a closing socket may take to finish the handshake before it is cut. */
const CLOSE_GRACE_MS = 5_000;

export function attachSubscriptions(deps: SubscriptionServerDeps): SubscriptionServer {
  const { logger, limits } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const sessions = new WeakMap<WebSocket, Session>();
  const accounts = new LRUCache<string, Promise<number>>({ max: 10_000, ttl: ACCOUNT_TTL_MS });
  let closedTooSlow = 0;

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = new URL(req.url ?? '/', 'http://gateway').pathname;
    if (pathname !== deps.path) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  deps.httpServer.on('upgrade', onUpgrade);

  const accountOf = (caller: Caller, api: PaymentsApi): Promise<number> => {
    let pending = accounts.get(caller.callerId);
    if (!pending) {
      pending = api.accounts.current().then((a) => a.id);
      pending.catch(() => accounts.delete(caller.callerId));
      accounts.set(caller.callerId, pending);
    }
    return pending;
  };

  const closeSoon = (socket: WebSocket, code: number, reason: string) => {
    socket.close(code, reason);
    // A client that does not read never completes the close handshake.
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  };

  const format = (errors: readonly GraphQLError[]) => errors.map((e) => deps.formatError(e.toJSON(), e));

  const disposable = useServer<Record<string, unknown>>(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const socket = ctx.extra.socket;
        const params = ctx.connectionParams ?? {};
        const header = [params.authorization, params.Authorization].find((v): v is string => typeof v === 'string');
        const caller = readCaller(header, deps.config.paymentsEnv);
        if (caller === null) {
          socket.close(CloseCodes.unauthorized, 'Unauthorized: connectionParams.authorization must be "Bearer <key>"');
          return false;
        }
        if (caller instanceof GraphQLError) {
          const forbidden = caller.extensions.code === 'FORBIDDEN';
          socket.close(forbidden ? CloseCodes.forbidden : CloseCodes.unauthorized, forbidden ? 'Forbidden: key of another environment' : 'Unauthorized: malformed API key');
          return false;
        }
        const api = deps.forKey(caller.apiKey);
        try {
          sessions.set(socket, { caller, api, accountId: await accountOf(caller, api) });
          return true;
        } catch (error) {
          if (error instanceof UpstreamAuthenticationError) socket.close(CloseCodes.unauthorized, 'Unauthorized: the API key was refused');
          else if (error instanceof UpstreamPermissionError) socket.close(CloseCodes.forbidden, 'Forbidden');
          else {
            logger.warn({ err: error instanceof Error ? { message: error.message } : error }, 'subscription connection refused: account lookup failed');
            socket.close(CloseCodes.tryAgainLater, 'Upstream unavailable, try again later');
          }
          return false;
        }
      },
      onSubscribe: (ctx) => {
        if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptionsPerConnection) {
          return [new GraphQLError(`At most ${limits.maxSubscriptionsPerConnection} operations per connection.`, { extensions: { code: 'RATE_LIMITED' } })];
        }
        return undefined;
      },
      context: (ctx): Context => {
        const socket = ctx.extra.socket;
        const session = sessions.get(socket);
        // onConnect admitted this socket, so there is a session.
        if (!session) throw new GraphQLError('Not connected.', { extensions: { code: 'UNAUTHENTICATED' } });
        const { api, caller, accountId } = session;
        const context: Context = {
          api,
          callerId: caller.callerId,
          loaders: createLoaders(api, caller.callerId, deps.currencyCatalog),
          pagination: deps.config.pagination,
          logger,
          currencyCatalog: deps.currencyCatalog,
          realtime: {
            accountId,
            events: (select) =>
              boundedStream({
                bus: deps.bus,
                accountId,
                select,
                limit: limits.queueLimit,
                isCongested: () => socket.bufferedAmount > limits.maxBufferedBytes,
                onOverflow: () => {
                  closedTooSlow += 1;
                  logger.warn({ callerId: caller.callerId, queueLimit: limits.queueLimit }, 'subscriber too slow: connection closed');
                  closeSoon(socket, CloseCodes.tooSlow, `Subscriber too slow: more than ${limits.queueLimit} events queued`);
                },
                // Each event is a new read of the world: relations are loaded afresh, not from the last event's cache.
                beforeEach: () => {
                  context.loaders = createLoaders(api, caller.callerId, deps.currencyCatalog);
                },
              }),
          },
        };
        return context;
      },
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: format(result.errors) } : undefined),
      onError: (_ctx, _id, _payload, errors) => format(errors),
    },
    wss,
  );

  return {
    stats: () => ({ connections: wss.clients.size, subscriptions: deps.bus.listenerCount(), closedTooSlow }),
    async close() {
      deps.httpServer.off('upgrade', onUpgrade);
      const clients = [...wss.clients];
      await disposable.dispose();
      // dispose() sends 1001 but does not wait for the handshake; cut what is left so the HTTP server can close.
      await new Promise((resolve) => setTimeout(resolve, clients.some((c) => c.readyState !== c.CLOSED) ? 200 : 0));
      for (const client of clients) client.terminate();
    },
  };
}
