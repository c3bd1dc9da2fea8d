/**
 * GraphQL over WebSocket (graphql-ws) at /graphql; a connection authenticates once with the bearer key,
 * and the account behind it scopes every event the connection can see.
 */
import type http from 'node:http';
import { setMaxListeners } from 'node:events';
import type { Duplex } from 'node:stream';
import { getOperationAST, GraphQLError, type FormattedExecutionResult, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Context, ContextDeps } from '../context.js';
import { ErrorCode } from '../errors.js';
import { UpstreamAuthenticationError, UpstreamPermissionError, UpstreamRouteMissingError } from '../upstream/index.js';
import type { EventBus } from '../realtime/bus.js';
import { REVOKED_KEY_MESSAGE, Tally, type Admission, type Caller, type OpenStream, type StreamRefusal } from '../access/admission.js';
import type { Reconciler } from '../realtime/reconciler.js';
import { wasRefused } from './body.js';
import { clientAddress } from './client-address.js';
import { streamContext, streamedResult } from './realtime-session.js';
import { attributeErrors, withRequestId, type OperationTelemetry } from '../observability/index.js';

/** Close codes a client can act on (4xxx: application-defined, per RFC 6455). */
const CloseCodes = {
  unauthorized: 4401,
  forbidden: 4403,
  tooSlow: 4429,
  tooMany: 1008,
  tryAgainLater: 1013,
  /** The upstream lacks `GET /v1/accounts` (beyond the spec): trying again will not help. */
  upstreamUnsupported: 4502,
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
  reconciler: Reconciler;
  context: ContextDeps;
  limits: SubscriptionLimits;
  admission: Admission;
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

export interface SubscriptionServer {
  stats(): { connections: number; subscriptions: number; closedTooSlow: number };
  close(): Promise<void>;
}

interface Session {
  caller: Caller;
  address: string;
  accountId: number;
  /** This connection's live operations by id, each holding its slot of the key's cap (admission.openStream). */
  operations: Map<string, OpenStream>;
  /** Aborted when the socket closes: an operation still being admitted gives its slot back then. */
  closed: AbortSignal;
  telemetry: Map<string, OperationTelemetry>;
}

/** Incoming messages are subscribe requests: small. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** How long a closing socket may take to finish the handshake before it is cut. */
const CLOSE_GRACE_MS = 5_000;

export function attachSubscriptions(deps: SubscriptionServerDeps): SubscriptionServer {
  const { limits } = deps;
  const { logger, config, observability } = deps.context;
  const caps = config.limits.ws;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const sessions = new WeakMap<WebSocket, Session>();
  // What one key, one client address and the whole instance may hold (docs/security.md).
  const byAddress = new Tally();
  const connectionsByKey = new Tally();
  const { admission } = deps;
  let closedTooSlow = 0;

  const refuseUpgrade = (socket: Duplex, status: string) => socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\n\r\n`);

  const addressOf = clientAddress(config.limits.trustedProxies);
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Sent behind a body answered 413 on the same connection: nothing after it is served.
    if (wasRefused(req.socket)) return void socket.destroy();
    const pathname = new URL(req.url ?? '/', 'http://gateway').pathname;
    if (pathname !== deps.path) return refuseUpgrade(socket, '404 Not Found');
    if (wss.clients.size >= caps.maxConnections) return refuseUpgrade(socket, '503 Service Unavailable');
    const address = addressOf(req);
    if (byAddress.get(address) >= caps.maxConnectionsPerAddress) return refuseUpgrade(socket, '429 Too Many Requests');
    // Reserved before the first await, so a burst of upgrades cannot all pass the check above.
    byAddress.add(address);
    void admission.connection(address).then((limited) => {
      if (limited || socket.destroyed) {
        byAddress.remove(address);
        return refuseUpgrade(socket, '429 Too Many Requests');
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.once('close', () => byAddress.remove(address));
        wss.emit('connection', ws, req);
      });
    });
  };
  deps.httpServer.on('upgrade', onUpgrade);

  const closeSoon = (socket: WebSocket, code: number, reason: string) => {
    socket.close(code, reason);
    // A client that does not read never completes the close handshake.
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  };

  const format = (errors: readonly GraphQLError[]) => errors.map((e) => deps.formatError(e.toJSON(), e));
  const revokedClose = (socket: WebSocket) => closeSoon(socket, CloseCodes.unauthorized, 'Unauthorized: the API key was revoked');
  const releaseOperation = (session: Session | undefined, id: string) => {
    session?.operations.get(id)?.release();
    session?.operations.delete(id);
  };
  const refuse = (message: string, extra: Record<string, unknown> = {}) => [new GraphQLError(message, { extensions: { code: ErrorCode.RATE_LIMITED, ...extra } })];
  const refusal = (refused: StreamRefusal): GraphQLError[] => {
    switch (refused.kind) {
      // Revoked while this connection closes (4401): a client that ignores the close starts nothing more.
      case 'revoked':
        return [new GraphQLError(REVOKED_KEY_MESSAGE, { extensions: { code: ErrorCode.UNAUTHENTICATED } })];
      case 'cap':
        return refuse(`At most ${refused.limit} live operations per API key.`);
      case 'rate':
        return refuse('Too many subscribe messages for this API key; retry later.', { retryAfterSeconds: refused.refusal.retryAfterSeconds });
      case 'document':
        return refused.errors;
      case 'account':
      case 'not-subscription':
      case 'slot':
      case 'gone':
        // Not asked of this transport (its account is known, it serves every operation), or the socket is gone.
        return [new GraphQLError('The connection closed before the operation started.', { extensions: { code: ErrorCode.BAD_USER_INPUT } })];
    }
  };

  const disposable = useServer<Record<string, unknown>>(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const socket = ctx.extra.socket;
        const params = ctx.connectionParams ?? {};
        // Browsers cannot set headers on a WebSocket, so clients put the key in connectionParams. Apollo
        // Router in passthrough mode sends the Authorization it propagates as `{ token: <header value> }`,
        // and on the upgrade request itself (supergraph/router.yaml, docs/routers.md).
        const upgradeHeader = ctx.extra.request.headers.authorization;
        const header = [params.authorization, params.Authorization, params.token, upgradeHeader].find((v): v is string => typeof v === 'string');
        const caller = admission.caller(header);
        if (caller === null) {
          socket.close(CloseCodes.unauthorized, 'Unauthorized: connectionParams.authorization must be "Bearer <key>"');
          return false;
        }
        if (caller instanceof GraphQLError) {
          const forbidden = caller.extensions.code === 'FORBIDDEN';
          const revoked = caller.message === REVOKED_KEY_MESSAGE;
          socket.close(forbidden ? CloseCodes.forbidden : CloseCodes.unauthorized, forbidden ? 'Forbidden: key of another environment' : revoked ? 'Unauthorized: the API key was refused' : 'Unauthorized: malformed API key');
          return false;
        }
        if (connectionsByKey.get(caller.callerId) >= caps.maxConnectionsPerKey) {
          socket.close(CloseCodes.tooMany, `Too many connections for this API key (at most ${caps.maxConnectionsPerKey})`);
          return false;
        }
        // Reserved before the await, so simultaneous connections of one key cannot all pass the cap.
        connectionsByKey.add(caller.callerId);
        try {
          const accountId = await admission.account(caller);
          if (socket.readyState !== socket.OPEN) {
            connectionsByKey.remove(caller.callerId);
            return false;
          }
          const closed = new AbortController();
          // One listener per operation being admitted or live on the connection: not a leak, up to its cap.
          setMaxListeners(limits.maxSubscriptionsPerConnection + 2, closed.signal);
          sessions.set(socket, { caller, address: addressOf(ctx.extra.request), accountId, operations: new Map(), closed: closed.signal, telemetry: new Map() });
          // The key revoked on any instance: the connection and every operation on it end.
          const stopLive = admission.live(caller, () => revokedClose(socket));
          socket.once('close', () => {
            stopLive();
            connectionsByKey.remove(caller.callerId);
            closed.abort();
            // Each release is idempotent: the onComplete graphql-ws still sends for each one gives nothing back twice.
            const operations = sessions.get(socket)?.operations;
            for (const stream of operations?.values() ?? []) stream.release();
            operations?.clear();
          });
          return true;
        } catch (error) {
          connectionsByKey.remove(caller.callerId);
          if (error instanceof UpstreamAuthenticationError) socket.close(CloseCodes.unauthorized, 'Unauthorized: the API key was refused');
          else if (error instanceof UpstreamPermissionError) socket.close(CloseCodes.forbidden, 'Forbidden');
          else if (error instanceof UpstreamRouteMissingError) socket.close(CloseCodes.upstreamUnsupported, 'The payments API does not offer GET /v1/accounts');
          else {
            logger.warn({ err: error instanceof Error ? { message: error.message } : error }, 'subscription connection refused: account lookup failed');
            socket.close(CloseCodes.tryAgainLater, 'Upstream unavailable, try again later');
          }
          return false;
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        const session = sessions.get(ctx.extra.socket);
        if (!session) return undefined;
        // A connection's own bound, before the sequence every stream shares.
        if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptionsPerConnection) {
          return refuse(`At most ${limits.maxSubscriptionsPerConnection} operations per connection.`);
        }
        // The sequence every streaming transport shares: revoked, per-key cap, stream rate, document, account
        // (asked at connect), live; the slot it holds is given back by onComplete, onError or the socket's close.
        const variables = payload.variables ?? {};
        const opened = await admission.openStream({
          transport: 'ws',
          caller: session.caller,
          address: session.address,
          payload: payload as unknown as Record<string, unknown>,
          operationName: payload.operationName ?? undefined,
          variables,
          subscriptionsOnly: false,
          accountId: session.accountId,
          signal: session.closed,
          onRevoked: () => revokedClose(ctx.extra.socket),
        });
        if ('refused' in opened) return refusal(opened.refused);
        session.operations.set(id, opened.stream);
        return { schema: deps.schema, document: opened.stream.document, operationName: payload.operationName, variableValues: variables };
      },
      onComplete: (ctx, id) => {
        const session = sessions.get(ctx.extra.socket);
        releaseOperation(session, id);
        session?.telemetry.get(id)?.end();
        session?.telemetry.delete(id);
      },
      context: (ctx, id, _payload, args): Context => {
        const socket = ctx.extra.socket;
        const session = sessions.get(socket);
        if (!session) throw new GraphQLError('Not connected.', { extensions: { code: ErrorCode.UNAUTHENTICATED } });
        const { caller, accountId } = session;
        // One connection carries many operations: each gets an id of its own, in the connection's trace.
        const telemetry = observability.startOperation({ transport: 'websocket', headers: ctx.extra.request.headers, freshId: true });
        // The key's share of operation-name labels, as over HTTP.
        telemetry.by(caller.callerId);
        const operation = getOperationAST(args.document, args.operationName);
        const type = operation?.operation ?? 'unknown';
        telemetry.named(args.operationName ?? operation?.name?.value, type);
        if (type === 'subscription') observability.subscriptionStarted();
        session.telemetry.set(id, telemetry);
        // Each operation, and each event of a subscription, gets the deadline an
        // HTTP operation gets: an event's relations are a new read of the world.
        const context = streamContext({
          context: deps.context,
          bus: deps.bus,
          reconciler: deps.reconciler,
          caller,
          accountId,
          telemetry,
          queueLimit: limits.queueLimit,
          isCongested: () => socket.bufferedAmount > limits.maxBufferedBytes,
          onOverflow: () => {
            closedTooSlow += 1;
            logger.warn({ callerId: caller.callerId, queueLimit: limits.queueLimit }, 'subscriber too slow: connection closed');
            closeSoon(socket, CloseCodes.tooSlow, `Subscriber too slow: more than ${limits.queueLimit} events queued`);
          },
        });
        return context;
      },
      onNext: (ctx, id, _payload, args, result) => {
        const telemetry = sessions.get(ctx.extra.socket)?.telemetry.get(id);
        const sent = streamedResult(result, telemetry, format, admission.documents);
        // A query's or mutation's answer says what it cost, as over HTTP; a subscription's events do not.
        if (!telemetry || telemetry.isSubscription) return sent;
        const cost = admission.cost(args.document, args.operationName ?? undefined, args.variableValues ?? {}, args.contextValue as Context);
        if (!cost) return sent;
        const answer = sent ?? (result as FormattedExecutionResult);
        return { ...answer, extensions: { ...answer.extensions, cost } };
      },
      onError: (ctx, id, _payload, errors) => {
        const session = sessions.get(ctx.extra.socket);
        // An operation that fails to start (refused, or no operation of that name) never completes: free its slot here.
        releaseOperation(session, id);
        // Refused before execution (validation, limits) has no telemetry yet: count it as one operation.
        const telemetry = session?.telemetry.get(id) ?? observability.startOperation({ transport: 'websocket', headers: ctx.extra.request.headers, freshId: true });
        attributeErrors(errors, telemetry);
        const formatted = format(errors);
        telemetry.answered(null, formatted);
        if (!session?.telemetry.has(id)) telemetry.end();
        return withRequestId(formatted, telemetry.requestId);
      },
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
