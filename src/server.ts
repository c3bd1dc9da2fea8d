/**
 * The gateway assembled: one node:http server whose routes are the
 * transports of src/http (GraphQL over HTTP and WebSocket at /graphql, the
 * webhook receiver, health and readiness), over one schema, one error
 * formatter and one context builder (src/context.ts). One instance is
 * stateless; per-operation state lives in the Context.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginInlineTrace } from '@apollo/server/plugin/inlineTrace';
import type { Config } from './config.js';
import type { ContextDeps, UpstreamClientFactory } from './context.js';
import { createErrorFormatter } from './errors.js';
import { authGate, createGraphQLRoute, type HttpContext } from './http/graphql-route.js';
import { isClientAbort, sendJson } from './http/body.js';
import { healthz, readyz } from './http/health.js';
import { createWebhookReceiver } from './http/webhook-route.js';
import { attachSubscriptions } from './http/websocket.js';
import { createEntityCache, memoryStore, redisStore, type EntityCache } from './cache/index.js';
import type { Logger } from './logger.js';
import { buildSchema } from './schema.js';
import { startRealtime } from './realtime/index.js';
import { MemoryIdempotencyStore, type IdempotencyStore } from './idempotency/index.js';
import { documentRules, operationLimits, withoutSuggestions } from './limits/graphql-limits.js';
import { RejectedKeys } from './limits/upstream-budget.js';
import { capResponseSize } from './limits/response-size.js';
import { createRateLimiter } from './limits/rate-limit.js';
import { Redis } from 'ioredis';
import { gatewayExplorer, type ExplorerOptions } from './explorer/gateway.js';

export type { UpstreamClientFactory } from './context.js';

export interface GatewayDeps {
  config: Readonly<Config>;
  upstream: UpstreamClientFactory;
  logger: Logger;
  /** Idempotency records shared by every instance (Redis); an in-memory store when absent. */
  idempotencyStore?: IdempotencyStore;
  /** Prefills of the bundled explorer (GRAPHQL_EXPLORER=graphiql), e.g. the embedded emulator's key. */
  explorer?: Omit<ExplorerOptions, 'endpoint'>;
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

type Route = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

export async function startGateway({ config, upstream, logger, idempotencyStore, explorer: explorerOptions }: GatewayDeps): Promise<RunningGateway> {
  const httpServer = http.createServer({
    // A slow client cannot hold a connection open: whole request in 30 s, headers in 10 s.
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    keepAliveTimeout: 5_000,
  });
  httpServer.maxConnections = config.limits.maxHttpConnections;
  const ownStore = idempotencyStore ? null : new MemoryIdempotencyStore();
  let draining = false;
  const contextDeps: ContextDeps = {
    config,
    rejectedKeys: new RejectedKeys(config.limits.rejectedKeyTtlMs),
    upstream,
    logger,
    entityCache: await startEntityCache(config, logger),
    idempotencyStore: idempotencyStore ?? ownStore!,
  };
  // Per-key limits hold across instances when they share Redis.
  const limitsRedis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }) : null;
  limitsRedis?.on('error', (error: Error) => logger.warn({ err: { message: error.message } }, 'rate-limit store unreachable; limiting in memory meanwhile'));
  const schema = buildSchema();
  const formatError = createErrorFormatter({
    onInternalError: (error) => logger.error({ err: error }, 'internal error masked in a GraphQL response'),
    ...(config.graphql.suggestions ? {} : { requestMessage: withoutSuggestions }),
  });
  const explorer = gatewayExplorer(config.explorer, { endpoint: '/graphql', ...explorerOptions });
  const apollo = new ApolloServer<HttpContext>({
    schema,
    introspection: config.graphql.introspection,
    includeStacktraceInErrorResponses: false,
    formatError,
    logger,
    parseOptions: { maxTokens: config.limits.maxTokens },
    stringifyResult: capResponseSize(config.limits.maxResponseBytes, logger),
    validationRules: documentRules(config.limits),
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: config.shutdown.graceMs }),
      authGate(),
      operationLimits(schema, config.limits, config.pagination),
      // Installed by hand: the federated tracing Apollo adds to a subgraph by itself, minus its info line at start.
      ApolloServerPluginInlineTrace(),
      ...explorer.apolloPlugins,
    ],
  });
  await apollo.start();

  // Webhooks in, subscriptions out (src/realtime): same schema, context and error mapping as HTTP.
  const realtime = await startRealtime({ redisUrl: config.redisUrl, logger });
  const subscriptions = attachSubscriptions({
    httpServer,
    path: '/graphql',
    schema,
    bus: realtime.bus,
    context: contextDeps,
    limits: {
      queueLimit: config.subscriptionQueueLimit,
      maxBufferedBytes: config.subscriptionMaxBufferedBytes,
      maxSubscriptionsPerConnection: 100,
    },
    formatError,
  });
  const health = {
    subscriptions: () => subscriptions.stats(),
    breakers: () => upstream.breakerStates?.() ?? {},
    draining: () => draining,
  };

  const routes: Record<string, Route> = {
    '/graphql': createGraphQLRoute(apollo, contextDeps, createRateLimiter({ perMinute: config.limits.operationsPerMinute, prefix: 'payments-gateway:ops', redis: limitsRedis })),
    '/webhooks/payments': createWebhookReceiver({
      secrets: config.webhookSecrets,
      ledger: realtime.ledger,
      bus: realtime.bus,
      logger,
      // In the store every instance reads (Redis when shared), before the upstream hears "received".
      evict: (event) => contextDeps.entityCache.evictObject(event.object, event.objectId),
    }),
    '/healthz': healthz(health),
    '/readyz': readyz(health),
  };

  httpServer.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (draining) res.setHeader('connection', 'close');
    // The explorer answers a browser's GET /graphql and its own assets; everything else goes on.
    if (explorer.handle(req, res)) return;
    const route = routes[url.pathname] ?? ((_req, response) => sendJson(response, 404, { error: 'not found' }));
    Promise.resolve(route(req, res, url)).catch((error: unknown) => {
      if (isClientAbort(error)) {
        logger.debug({ path: url.pathname }, 'client went away mid-request');
        return;
      }
      logger.error({ err: error }, 'request handling failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  });

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
      await contextDeps.entityCache.close();
      limitsRedis?.disconnect();
    },
  };
}

const CACHE_PREFIX = 'payments-gateway:cache:';

/** The entity cache over Redis when instances share one (REDIS_URL), else over a bounded memory store. */
async function startEntityCache(config: Readonly<Config>, logger: Logger): Promise<EntityCache> {
  const settings = { customerTtlMs: config.entityCache.customerTtlMs, currencyTtlMs: config.currencyCacheTtlMs, finalTtlMs: config.entityCache.finalTtlMs };
  if (!config.entityCache.enabled) return createEntityCache(null, settings, logger);
  if (!config.redisUrl) return createEntityCache(memoryStore(config.entityCache.maxObjects), settings, logger);
  // A slow cache must cost less than the upstream call it saves: fail fast, read the upstream.
  // No offline queue: while Redis reconnects, reads miss at once instead of waiting for it.
  const redis = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 500, enableOfflineQueue: false });
  redis.on('error', (error: Error) => logger.warn({ err: { message: error.message } }, 'entity cache store unreachable'));
  await redis.connect();
  const longest = Math.max(settings.customerTtlMs, settings.currencyTtlMs, settings.finalTtlMs);
  return createEntityCache(redisStore({ redis, prefix: CACHE_PREFIX, generationTtlMs: longest + 60_000 }), settings, logger);
}
