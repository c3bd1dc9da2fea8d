/**
 * The gateway's HTTP server: GraphQL at /graphql (Apollo Server 5 driven
 * through its integration API over node:http, no framework in between),
 * /healthz and /readyz. One instance is stateless; per-request state lives in
 * the Context.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap, type GraphQLRequestContext } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { Kind, type GraphQLError, type OperationDefinitionNode, type SelectionSetNode, type FragmentDefinitionNode } from 'graphql';
import type { Config } from './config.js';
import type { Context } from './context.js';
import { createErrorFormatter, unauthenticated } from './errors.js';
import { createCurrencyCatalog } from './loaders/currency-catalog.js';
import { createLoaders } from './loaders/index.js';
import type { Logger } from './logger.js';
import { readCaller } from './auth.js';
import { buildSchema } from './schema.js';
import { attachSubscriptions, createWebhookReceiver, startRealtime } from './realtime/index.js';
import type { PaymentsApi } from './upstream/api.js';
import type { BreakerState, OperationScope } from './upstream/index.js';
import { MemoryIdempotencyStore, type IdempotencyStore } from './idempotency/index.js';

export interface UpstreamClientFactory {
  forKey(apiKey: string, scope?: OperationScope): PaymentsApi;
  /** Per-route circuit breaker states, reported by /readyz. */
  breakerStates?(): Record<string, BreakerState>;
}

export interface GatewayDeps {
  config: Readonly<Config>;
  upstream: UpstreamClientFactory;
  logger: Logger;
  /** Idempotency records shared by every instance (Redis); an in-memory store when absent. */
  idempotencyStore?: IdempotencyStore;
}

export interface RunningGateway {
  url: string;
  port: number;
  server: http.Server;
  /**
   * Graceful: /readyz turns 503 at once, new connections are refused after
   * `shutdown.readinessDelayMs`, subscriptions are closed (1001 Going Away),
   * in-flight operations get `shutdown.graceMs` to finish.
   */
  stop(): Promise<void>;
}

/** Largest request body accepted; GraphQL documents and variables are small. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Root fields that need no caller: schema introspection and the federation SDL. */
const PUBLIC_ROOT_FIELDS = new Set(['__schema', '__type', '__typename', '_service']);

type GatewayContext = Context & { authError: GraphQLError | null; authenticated: boolean };

export async function startGateway({ config, upstream, logger, idempotencyStore }: GatewayDeps): Promise<RunningGateway> {
  const httpServer = http.createServer();
  const ownStore = idempotencyStore ? null : new MemoryIdempotencyStore();
  const idempotency = idempotencyStore ?? ownStore!;
  let draining = false;
  const currencyCatalog = createCurrencyCatalog(config.currencyCacheTtlMs);
  const schema = buildSchema();
  const formatError = createErrorFormatter({
    onInternalError: (error) => logger.error({ err: error }, 'internal error masked in a GraphQL response'),
  });
  const apollo = new ApolloServer<GatewayContext>({
    schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    formatError,
    logger,
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: config.shutdown.graceMs }), authGate()],
  });
  await apollo.start();

  // Webhooks in, subscriptions out (src/realtime): same schema and error mapping as HTTP.
  const realtime = await startRealtime({ redisUrl: config.redisUrl, logger });
  const receiveWebhook = createWebhookReceiver({ secrets: config.webhookSecrets, ledger: realtime.ledger, bus: realtime.bus, logger });
  const subscriptions = attachSubscriptions({
    httpServer,
    path: '/graphql',
    schema,
    bus: realtime.bus,
    forKey: (key) => upstream.forKey(key),
    config,
    limits: {
      queueLimit: config.subscriptionQueueLimit,
      maxBufferedBytes: config.subscriptionMaxBufferedBytes,
      maxSubscriptionsPerConnection: 100,
    },
    logger,
    currencyCatalog,
    formatError,
  });

  const contextFor = (req: http.IncomingMessage) => async (): Promise<GatewayContext> => {
    const caller = readCaller(req.headers.authorization, config.paymentsEnv);
    const authError = caller instanceof Error ? caller : null;
    const ok = caller && !(caller instanceof Error) ? caller : null;
    // Every upstream call and retry of this operation stops at its deadline.
    const deadlineAt = Date.now() + config.operationDeadlineMs;
    const api = ok ? upstream.forKey(ok.apiKey, { deadlineAt }) : unauthenticatedApi(authError);
    const headerKey = req.headers['idempotency-key'];
    return {
      idempotency: {
        store: idempotency,
        settings: config.idempotency,
        headerKey: typeof headerKey === 'string' ? headerKey : undefined,
        deadlineAt,
      },
      api,
      callerId: ok?.callerId ?? 'anonymous',
      loaders: createLoaders(api, ok?.callerId ?? 'anonymous', currencyCatalog),
      pagination: config.pagination,
      logger,
      currencyCatalog,
      authError,
      authenticated: ok !== null,
    };
  };

  httpServer.on('request', (req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'request handling failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (draining) res.setHeader('connection', 'close');
    switch (url.pathname) {
      case '/healthz':
        return sendJson(res, 200, { status: 'ok', subscriptions: subscriptions.stats() });
      case '/readyz': {
        // An open breaker is reported, not a reason to leave the pool: every instance shares the upstream.
        const breakers = upstream.breakerStates?.() ?? {};
        return sendJson(res, draining ? 503 : 200, { status: draining ? 'draining' : 'ready', breakers });
      }
      case '/graphql':
        return handleGraphQL(req, res, url);
      case '/webhooks/payments':
        return receiveWebhook(req, res);
      default:
        return sendJson(res, 404, { error: 'not found' });
    }
  }

  async function handleGraphQL(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    setCorsHeaders(res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const raw = await readBody(req);
    if (raw === null) {
      return sendJson(res, 413, { errors: [{ message: 'Request body too large.', extensions: { code: 'BAD_REQUEST' } }] });
    }
    let body: unknown = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        return sendJson(res, 400, { errors: [{ message: 'The request body is not valid JSON.', extensions: { code: 'BAD_REQUEST' } }] });
      }
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body },
      context: contextFor(req),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    url: `http://${host}:${port}/graphql`,
    port,
    server: httpServer,
    async stop() {
      draining = true;
      // Let load balancers see /readyz fail before the listener closes.
      if (config.shutdown.readinessDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdown.readinessDelayMs));
      // WebSockets first: the HTTP server cannot close while upgraded sockets remain.
      await subscriptions.close();
      // Apollo's drain plugin closes the HTTP server and waits for in-flight requests.
      await apollo.stop();
      await realtime.close();
      await ownStore?.close();
    },
  };
}

/**
 * Refuses, before any resolver runs, an operation that needs a caller and has
 * none (or has one that can never work here), so no upstream call is made.
 */
function authGate() {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, operation, document }: GraphQLRequestContext<GatewayContext>) {
          if (contextValue.authenticated || !operation) return;
          const fragments = new Map<string, FragmentDefinitionNode>();
          for (const def of document?.definitions ?? []) {
            if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
          }
          if (rootFieldNames(operation, fragments).every((name) => PUBLIC_ROOT_FIELDS.has(name))) return;
          throw contextValue.authError ?? unauthenticated('Authentication required: send "Authorization: Bearer <secret API key>".');
        },
      };
    },
  };
}

function rootFieldNames(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): string[] {
  const names: string[] = [];
  const visit = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) names.push(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) visit(sel.selectionSet);
      else {
        const fragment = fragments.get(sel.name.value);
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  visit(operation.selectionSet);
  return names;
}

/** Stand-in client for callers without a usable key; the auth gate makes it unreachable. */
function unauthenticatedApi(authError: GraphQLError | null): PaymentsApi {
  const fail = () => {
    throw authError ?? unauthenticated('Authentication required.');
  };
  return new Proxy({} as PaymentsApi, { get: () => new Proxy({}, { get: () => fail }) });
}

function setCorsHeaders(res: http.ServerResponse): void {
  // Bearer-token auth, no cookies: any origin (Apollo Sandbox, local frontends) may call.
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader('access-control-allow-headers', 'authorization, content-type, apollo-require-preflight, idempotency-key, x-apollo-operation-name');
  res.setHeader('access-control-max-age', '600');
}

function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
