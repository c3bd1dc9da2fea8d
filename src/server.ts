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
import { ApolloServerPluginInlineTrace } from '@apollo/server/plugin/inlineTrace';
import { ApolloServerPluginUsageReporting } from '@apollo/server/plugin/usageReporting';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginUsageReportingDisabled } from '@apollo/server/plugin/disabled';
import type { Config } from './config.js';
import type { ContextDeps, UpstreamClientFactory } from './context.js';
import { createErrorFormatter } from './errors.js';
import { createCacheHints, type CacheHintRules } from './graphql/cache-hints.js';
import { jitGateway } from './graphql/jit-executor.js';
import { createRouterInvalidation, withRouterInvalidation } from './cache/router-invalidation.js';
import { isFinalPayout, isFinalTransaction } from './payments/rules.js';
import { authGate, cacheHeaders, refusedKeyStatus, createGraphQLRoute, MAX_BODY_BYTES, type HttpContext } from './http/graphql-route.js';
import { ignoredAfterRefusal, isClientAbort, sendJson } from './http/body.js';
import { guardedMetrics, healthz, readyz } from './http/health.js';
import { opsAccess } from './http/ops-access.js';
import { createWebhookReceiver } from './http/webhook-route.js';
import { attachSubscriptions } from './http/websocket.js';
import { createSseRoute } from './http/sse.js';
import { createCallbackSubscriptions } from './http/subscription-callback.js';
import { guardConnections } from './http/connections.js';
import { createEntityCache, memoryStore, redisStore, type EntityCache } from './cache/index.js';
import type { Logger } from './logger.js';
import { buildSchema } from './schema.js';
import { createReconciler, startRealtime } from './realtime/index.js';
import { createUpstreamClient, keyId, UpstreamAuthenticationError, UpstreamNotFoundError, type UpstreamClient } from './upstream/index.js';
import { MemoryIdempotencyStore, type IdempotencyStore } from './idempotency/index.js';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { loadTrustedDocuments } from './limits/trusted-documents.js';
import { fairDocumentStore, UNPROVEN_OWNER, validatedDocuments } from './limits/document-store.js';
import { documentRules, operationCheck, withoutSuggestions } from './limits/graphql-limits.js';
import { documentCheck } from './limits/document-check.js';
import { KeyStatus, localRevocations, redisRevocations, type RevocationChannel } from './access/key-status.js';
import { createAdmission } from './access/admission.js';
import type { Redis } from 'ioredis';
import { RedisLinks, STATE_PREFIX } from './redis.js';
import { gatewayExplorer, type ExplorerOptions } from './explorer/gateway.js';
import { Observability, operationLoggerOf, operationTelemetryPlugin } from './observability/index.js';

export type { UpstreamClientFactory } from './context.js';

export interface GatewayDeps {
  config: Readonly<Config>;
  upstream: UpstreamClientFactory;
  logger: Logger;
  /** Idempotency records shared by every instance (Redis); an in-memory store when absent. */
  idempotencyStore?: IdempotencyStore;
  /** The Redis connections watched for /readyz, the metrics and the log: those opened before the gateway (the idempotency store's) join the gateway's. */
  redisLinks?: RedisLinks;
  /** Prefills of the bundled explorer (GRAPHQL_EXPLORER=graphiql), e.g. the embedded emulator's key. */
  explorer?: Omit<ExplorerOptions, 'endpoint'>;
  /** Metrics and traces; made from `config.observability` when absent. */
  observability?: Observability;
  /** Where usage reports go with APOLLO_USAGE_REPORTING=true: Apollo's ingress unless a test points it elsewhere. */
  apolloReportingUrl?: string;
}

export interface RunningGateway {
  url: string;
  port: number;
  server: http.Server;
  /** Where Prometheus scrapes; null when metrics are off. */
  metricsUrl: string | null;
  observability: Observability;
  /**
   * Graceful: /readyz turns 503 at once, new connections are refused after
   * `shutdown.readinessDelayMs`, subscriptions are closed (1001 Going Away),
   * in-flight operations get `shutdown.graceMs` to finish; those still
   * running then are cut, and counted.
   */
  stop(): Promise<ShutdownReport>;
}

export interface ShutdownReport {
  /** HTTP requests still in progress when the grace period ran out: their connections were closed unanswered. */
  cutRequests: number;
}

type Route = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

/** The upstream client as the configuration asks for it: time-out, HTTP client, resilience, decode memo. */
export function upstreamFor(config: Config, baseUrl: string): UpstreamClient {
  return createUpstreamClient({
    baseUrl,
    timeoutMs: config.upstreamTimeoutMs,
    httpClient: config.upstreamHttpClient,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    bytesInFlight: config.upstreamBytesInFlight,
    resilience: config.upstreamResilience,
    decodeMemoItems: config.entityCache.decodedItems,
  });
}

export async function startGateway({ config, upstream, logger, idempotencyStore, redisLinks, explorer: explorerOptions, observability: given, apolloReportingUrl }: GatewayDeps): Promise<RunningGateway> {
  const links = redisLinks ?? new RedisLinks(logger);
  const observability = given ?? new Observability(config.observability, logger);
  const detachUpstream = upstream.observe?.(observability.upstream);
  const httpServer = http.createServer({
    // A slow client cannot hold a connection open: whole request in 30 s, headers in 10 s.
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    keepAliveTimeout: 5_000,
  });
  httpServer.maxConnections = config.limits.maxHttpConnections;
  // Per client address, and idle connections closed near the cap: one address cannot hold every slot.
  // It also drains the server at shutdown, counting the requests it had to cut.
  const connections = guardConnections(httpServer, {
    maxConnections: config.limits.maxHttpConnections,
    perAddress: config.limits.maxHttpConnectionsPerAddress,
    trustedProxies: config.limits.trustedProxies,
  });
  const { callerMaxBytes, maxBytes } = config.idempotency;
  const ownStore = idempotencyStore ? null : new MemoryIdempotencyStore(undefined, undefined, callerMaxBytes, maxBytes);
  let draining = false;
  // Rate limits and revocations shared by every instance when they share Redis.
  const shared = await sharedLimitState(config, links, logger);
  const keys = new KeyStatus({ rejectedTtlMs: config.limits.rejectedKeyTtlMs, revalidateMs: config.limits.keyRevalidateMs, channel: shared.revocations });
  // Every eviction (a verified webhook, a mutation) also told to the router's response cache, when one is set.
  const routerSettings = config.graphql.routerInvalidation;
  const withRouter = (cache: EntityCache) =>
    routerSettings ? withRouterInvalidation(cache, createRouterInvalidation(routerSettings, { logger, observe: (o) => observability.routerInvalidation(o) })) : cache;
  const contextDeps: ContextDeps = {
    config,
    keys,
    upstream,
    logger,
    entityCache: withRouter(await startEntityCache(config, links, logger)),
    idempotencyStore: idempotencyStore ?? ownStore!,
    observability,
  };
  const ownSchema = () => {
    const built = buildSchema();
    observability.traceResolvers(built);
    return built;
  };
  const schema = ownSchema();
  const formatError = createErrorFormatter({
    // With the operation's request id, so the masked error and the caller's report meet in the logs.
    // Attributed as raised, or as thrown before Apollo wrapped it (a failed context).
    onInternalError: (original, raised) => operationLoggerOf(raised, operationLoggerOf(original, logger)).error({ err: original }, 'internal error masked in a GraphQL response'),
    ...(config.graphql.suggestions ? {} : { requestMessage: withoutSuggestions }),
  });
  // One document check for HTTP (Apollo Server) and the streaming transports (src/limits/document-check.ts).
  const caches = config.graphql.caches;
  const documents = documentCheck(schema, {
    maxTokens: config.limits.maxTokens,
    rules: documentRules(config.limits),
    check: operationCheck(schema, config.limits, config.pagination, caches.callerShare),
    trusted: config.trustedDocumentsPath ? loadTrustedDocuments(config.trustedDocumentsPath) : null,
    maxResponseBytes: config.limits.maxResponseBytes,
  });
  const explorer = gatewayExplorer(config.explorer, { endpoint: '/graphql', ...explorerOptions });
  // What a caller sends is kept in its own share of each cache; keys not accepted lately share one (docs/security.md).
  const ownerOf = (contextValue: unknown) => (contextValue as HttpContext).metricsOwner ?? UNPROVEN_OWNER;
  const httpLimits = documents.apolloOptions(config.graphql.costExtensions ? { maximumAvailable: config.limits.maxCost } : null, ownerOf);
  const httpDocuments = fairDocumentStore({ maxBytes: caches.documentBytes, callerShare: caches.callerShare }, ownerOf);
  const streamDocuments = validatedDocuments({ maxBytes: caches.documentBytes, callerShare: caches.callerShare });
  // Queries compiled by graphql-jit (src/graphql/jit-executor.ts), unless turned off or usage reports
  // are sent (they time every field, which a compiled query does not let them see).
  const compiler = config.graphql.jit && !config.observability.apollo?.usageReporting
    ? jitGateway(schema, { cache: { maxBytes: caches.jitBytes, callerShare: caches.callerShare }, compiledSchema: ownSchema(), ownerOf })
    : null;
  const apollo = new ApolloServer<HttpContext>({
    ...(compiler ? { gateway: compiler } : { schema }),
    documentStore: httpDocuments.store,
    persistedQueries: { cache: httpDocuments.persisted },
    introspection: config.graphql.introspection,
    includeStacktraceInErrorResponses: false,
    formatError,
    logger,
    parseOptions: httpLimits.parseOptions,
    // Without Apollo's trailing newline; the answer-size cap applies where the route writes it (graphql-route.ts).
    stringifyResult: (result) => JSON.stringify(result),
    validationRules: httpLimits.validationRules,
    plugins: [
      authGate({ routerSecretSet: config.graphql.routerSharedSecret !== null }),
      httpDocuments.plugin,
      httpLimits.plugin,
      // Installed by hand: the federated tracing Apollo adds to a subgraph by itself, minus its info line at start.
      ApolloServerPluginInlineTrace(),
      // Apollo's cache-control plugin costs a hook on every field of every answer; cacheHeaders()
      // decides the header once per document instead.
      ApolloServerPluginCacheControlDisabled(),
      cacheHeaders(createCacheHints(schema, cacheHintRules(config))),
      refusedKeyStatus,
      operationTelemetryPlugin<HttpContext>(),
      ...usageReporting(config.observability.apollo, apolloReportingUrl),
      ...explorer.apolloPlugins,
    ],
    // Given explicitly (not read from the environment by Apollo) so config.ts stays the one reader.
    ...(config.observability.apollo
      ? { apollo: { key: config.observability.apollo.key, ...(config.observability.apollo.graphRef ? { graphRef: config.observability.apollo.graphRef } : {}) } }
      : {}),
  });
  await apollo.start();

  // Webhooks in, subscriptions out (src/realtime): same schema, context and error mapping as HTTP.
  const realtime = await startRealtime({ redisUrl: config.redisUrl, logger, links });
  const reconciler = createReconciler({
    settings: config.reconcile,
    bus: realtime.bus,
    ledger: realtime.ledger,
    lease: realtime.lease,
    logger,
    // With a subscriber's own key, and an operation's deadline: a re-read is the subscriber's read, made later.
    read: async (apiKey, kind, id) => {
      const api = upstream.forKey(apiKey, { deadlineAt: Date.now() + config.operationDeadlineMs, gate: null });
      try {
        const current = kind === 'transaction' ? await api.transactions.retrieve(id) : await api.payouts.retrieve(id);
        keys.accept(keyId(apiKey));
        return current;
      } catch (error) {
        if (error instanceof UpstreamNotFoundError) return null;
        // The subscriber's key was revoked: its streams end (admission), everywhere.
        if (error instanceof UpstreamAuthenticationError) keys.revoke(keyId(apiKey));
        throw error;
      }
    },
  });
  // One door for every transport (src/access/admission.ts).
  const admission = createAdmission({
    config,
    keys,
    upstream,
    logger,
    documents,
    streams: {
      // Apollo Server adds the introspection rule itself for HTTP; graphql-ws and graphql-sse need it spelled out.
      rules: config.graphql.introspection ? documents.rules : [...documents.rules, NoSchemaIntrospectionCustomRule],
      // In production the subgraph SDL goes to the router only, by a secret these transports cannot carry (graphql-route.ts).
      refusedRootFields: config.production ? ['_service'] : [],
      // WebSocket and SSE share it: same schema, same rules.
      validated: streamDocuments,
    },
    redis: shared.redis,
    onRateLimited: (limit) => observability.rateLimited(limit),
  });
  const subscriptions = attachSubscriptions({
    httpServer,
    path: '/graphql',
    schema,
    bus: realtime.bus,
    reconciler,
    context: contextDeps,
    limits: {
      queueLimit: config.subscriptionQueueLimit,
      maxBufferedBytes: config.subscriptionMaxBufferedBytes,
      maxSubscriptionsPerConnection: 100,
    },
    admission,
    formatError,
  });
  observability.readFrom({
    routes: () => upstream.routeStats?.() ?? {},
    websocket: () => subscriptions.stats(),
    redis: () => links.state(),
    caches: () => ({
      compiled_queries: compiler?.cachedBytes() ?? 0,
      http_documents: httpDocuments.bytes(),
      persisted_queries: httpDocuments.persistedBytes(),
      stream_documents: streamDocuments.bytes,
      operation_prices: documents.check.cachedBytes(),
    }),
  });
  // The same subscriptions as Server-Sent Events, for clients without WebSockets (src/http/sse.ts).
  const sse = createSseRoute({
    schema,
    bus: realtime.bus,
    reconciler,
    context: contextDeps,
    limits: { queueLimit: config.subscriptionQueueLimit, maxBufferedBytes: config.subscriptionMaxBufferedBytes },
    admission,
    formatError,
  });
  // The same subscriptions over the router's HTTP callback protocol (src/http/subscription-callback.ts).
  const callbacks = createCallbackSubscriptions({ schema, bus: realtime.bus, reconciler, context: contextDeps, queueLimit: config.subscriptionQueueLimit, admission, formatError });
  const ops = opsAccess(config.production, config.opsToken);
  const health = {
    subscriptions: () => ({ ...subscriptions.stats(), ...sse.stats(), ...callbacks.stats() }),
    reconcile: () => ({ ...reconciler.stats(), readsPerSecondCap: config.reconcile.readsPerSecond }),
    connections: () => connections.stats(),
    breakers: () => upstream.breakerStates?.() ?? {},
    redis: () => links.state(),
    draining: () => draining,
  };

  const routes: Record<string, Route> = {
    '/graphql': createGraphQLRoute(apollo, contextDeps, admission, callbacks),
    '/webhooks/payments': createWebhookReceiver({
      secrets: config.webhookSecrets,
      live: config.paymentsEnv === 'live',
      maxBodyBytes: config.webhookMaxBodyBytes,
      ledger: realtime.ledger,
      bus: realtime.bus,
      logger,
      onResult: (result) => observability.webhook(result),
      // In the store every instance reads (Redis when shared), before the upstream hears "received".
      evict: (event) => contextDeps.entityCache.evictObject(event.object, event.objectId),
    }),
    '/healthz': healthz(health, ops),
    '/readyz': readyz(health, ops),
  };
  const metricsConfig = config.observability.metrics;
  // On the main port unless METRICS_PORT gives it a listener of its own (kept off the public port);
  // there, as the detail of the health routes, only to OPS_TOKEN in production (src/http/ops-access.ts).
  if (metricsConfig.enabled && metricsConfig.port === null) routes['/metrics'] = guardedMetrics(observability.metricsRoute(), ops);
  const metricsServer = metricsConfig.enabled && metricsConfig.port !== null ? await startMetricsServer(observability, metricsConfig.port, metricsConfig.host) : null;

  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (draining) res.setHeader('connection', 'close');
    // The explorer answers a browser's GET /graphql and its own assets; everything else goes on.
    const wantsSse = sse.wants(req);
    if (!wantsSse && explorer.handle(req, res)) return;
    const route =
      url.pathname === '/graphql' && wantsSse
        ? (request: http.IncomingMessage, response: http.ServerResponse) => sse.handle(request, response)
        : (routes[url.pathname] ?? ((_req, response) => sendJson(response, 404, { error: 'not found' })));
    Promise.resolve(route(req, res, url)).catch((error: unknown) => {
      if (isClientAbort(error)) {
        logger.debug({ path: url.pathname }, 'client went away mid-request');
        return;
      }
      logger.error({ err: error }, 'request handling failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  };

  // `Expect: 100-continue`: the body is invited only when no route would refuse it for its size;
  // a larger one gets its 413 before the client sends a byte of it.
  httpServer.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > MAX_BODY_BYTES)) res.writeContinue();
    httpServer.emit('request', req, res);
  });

  httpServer.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (ignoredAfterRefusal(req)) return;
    // A request pipelined behind others runs when its answer's turn comes, not when it is parsed:
    // Node never gives that turn to one queued behind an answer that closes the connection (a 413).
    if (res.socket) serve(req, res);
    else res.once('socket', () => serve(req, res));
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const host = reachable(config.host);
  const metricsUrl = !metricsConfig.enabled
    ? null
    : metricsServer
      ? `http://${reachable(metricsConfig.host)}:${(metricsServer.address() as AddressInfo).port}/metrics`
      : `http://${host}:${port}/metrics`;
  return {
    url: `http://${host}:${port}/graphql`,
    port,
    server: httpServer,
    metricsUrl,
    observability,
    async stop() {
      draining = true;
      links.closing();
      // Let load balancers see /readyz fail before the listener closes.
      if (config.shutdown.readinessDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdown.readinessDelayMs));
      // WebSockets first: the HTTP server cannot close while upgraded sockets remain.
      await subscriptions.close();
      sse.close();
      await callbacks.close();
      // The listener closes; in-flight requests get the grace period, then their connections are closed.
      const cutRequests = await connections.drain(config.shutdown.graceMs);
      await apollo.stop();
      await reconciler.close();
      await realtime.close();
      await ownStore?.close();
      await contextDeps.entityCache.close();
      await admission.close();
      shared.redis?.disconnect();
      detachUpstream?.();
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
      // Spans still buffered are exported before the process goes.
      if (!given) await observability.close();
      return { cutRequests };
    },
  };
}

function reachable(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

async function startMetricsServer(observability: Observability, port: number, host: string): Promise<http.Server> {
  const route = observability.metricsRoute();
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://metrics');
    if (pathname !== '/metrics') return sendJson(res, 404, { error: 'not found' });
    route(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Behind a router (the default) usage reaches Apollo from the router, and
 * this subgraph adds inline traces for it (see the inline-trace plugin and
 * ROUTER_SHARED_SECRET); with no router in front, APOLLO_USAGE_REPORTING=true
 * makes this server report usage itself. Variables and headers are never sent.
 */
function usageReporting(apollo: Config['observability']['apollo'], endpointUrl: string | undefined) {
  if (!apollo?.usageReporting) return [ApolloServerPluginUsageReportingDisabled()];
  return [
    ApolloServerPluginUsageReporting({
      sendVariableValues: { none: true },
      sendHeaders: { none: true },
      sendErrors: { masked: true },
      ...(endpointUrl ? { endpointUrl } : {}),
    }),
  ];
}

/**
 * What the admission door shares between instances over Redis: the operation rate per key, and revocations
 * (a pub/sub channel, on a connection of its own). In memory without REDIS_URL.
 */
async function sharedLimitState(config: Readonly<Config>, links: RedisLinks, logger: Logger): Promise<{ redis: Redis | null; revocations: RevocationChannel }> {
  if (!config.redisUrl) return { redis: null, revocations: localRevocations };
  const redis = links.open(config.redisUrl, 'limits');
  const subscriber = links.open(config.redisUrl, 'key-news');
  await subscriber.connect();
  return { redis, revocations: await redisRevocations(redis, subscriber, `${STATE_PREFIX}keys:revoked`, logger) };
}

// v2: the codec escapes data keys that look like its Decimal tag; entries of the version before are not read.
const CACHE_PREFIX = `${STATE_PREFIX}cache:v2:`;

/** The entity cache over Redis when instances share one (REDIS_URL), else over a bounded memory store. */
async function startEntityCache(config: Readonly<Config>, links: RedisLinks, logger: Logger): Promise<EntityCache> {
  const settings = { customerTtlMs: config.entityCache.customerTtlMs, currencyTtlMs: config.currencyCacheTtlMs, finalTtlMs: config.entityCache.finalTtlMs };
  if (!config.entityCache.enabled) return createEntityCache(null, settings, logger);
  const { maxObjects, maxBytes, maxEntryBytes } = config.entityCache;
  if (!config.redisUrl) return createEntityCache(memoryStore(maxObjects, Date.now, { maxBytes, maxEntryBytes }), settings, logger);
  // No offline queue (redis.ts): while Redis reconnects, reads miss at once instead of waiting for it.
  const redis = links.open(config.redisUrl, 'entity-cache');
  await redis.connect();
  const longest = Math.max(settings.customerTtlMs, settings.currencyTtlMs, settings.finalTtlMs);
  return createEntityCache(redisStore({ redis, prefix: CACHE_PREFIX, generationTtlMs: longest + 60_000, maxEntryBytes }), settings, logger);
}

/**
 * What a router may keep, and how long: the entity cache's own TTLs (customers,
 * currencies, and transactions and payouts once final), in seconds. Everything else
 * (lists, webhooks, events, logs) is not kept.
 */
function cacheHintRules(config: Config): CacheHintRules {
  const seconds = (ms: number) => Math.floor(ms / 1000);
  return {
    maxAge: {
      Customer: seconds(config.entityCache.customerTtlMs),
      Currency: seconds(config.currencyCacheTtlMs),
      Transaction: seconds(config.entityCache.finalTtlMs),
      Payout: seconds(config.entityCache.finalTtlMs),
    },
    finalWhen: { Transaction: isFinalTransaction, Payout: isFinalPayout },
  };
}
