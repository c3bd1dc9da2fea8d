/**
 * The gateway assembled: one node:http server whose routes are the transports
 * of src/http, over one schema, one error formatter and one context builder.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import type { ContextDeps, UpstreamClientFactory } from '../context.js';
import { createGraphQLRoute } from '../http/graphql-route.js';
import { guardedMetrics, healthz, METRICS_CLOSED, readyz } from '../http/health.js';
import { opsAccess } from '../http/ops-access.js';
import { createWebhookReceiver } from '../http/webhook-route.js';
import type { Logger } from '../logger.js';
import { buildSchema } from '../schema.js';
import { createUpstreamClient, type UpstreamClient } from '../upstream/index.js';
import type { IdempotencyStore } from '../idempotency/index.js';
import type { DeliveryLedger } from '../realtime/index.js';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createAdmission } from '../access/admission.js';
import { RedisLinks } from '../redis.js';
import { gatewayExplorer, type ExplorerOptions } from '../explorer/gateway.js';
import { Observability } from '../observability/index.js';
import { createApollo, documentLimits, errorFormatter } from './apollo.js';
import { dispatchRequests, gatewayHttpServer, listen, reachable, startMetricsServer, type Route } from './listen.js';
import { startStreams } from './streams.js';
import { startSharedState } from './shared-state.js';
import { createPollWatches } from '../cache/poll-watches.js';

export type { UpstreamClientFactory } from '../context.js';

export interface GatewayDeps {
  config: Readonly<Config>;
  upstream: UpstreamClientFactory;
  logger: Logger;
  /** An in-memory store when absent. */
  idempotencyStore?: IdempotencyStore;
  /** Without REDIS_URL, the webhook ledger (main.ts: on disk); in memory when absent. Closed by its opener. */
  webhookLedger?: DeliveryLedger;
  /** Connections opened before the gateway (the idempotency store's) join the watched ones. */
  redisLinks?: RedisLinks;
  explorer?: Omit<ExplorerOptions, 'endpoint'>;
  observability?: Observability;
  apolloReportingUrl?: string;
}

export interface RunningGateway {
  url: string;
  port: number;
  /** The address bound, as the system reports it (`127.0.0.1`, `0.0.0.0`, `::`): the banner says who can reach it. */
  boundAddress: string;
  server: http.Server;
  metricsUrl: string | null;
  /** Why no one can read `metricsUrl` (production without OPS_TOKEN), else null: the ready line says so. */
  metricsClosed: string | null;
  observability: Observability;
  /** Graceful: /readyz fails first; in-flight operations get `shutdown.graceMs`, then are cut and counted. */
  stop(): Promise<ShutdownReport>;
}

export interface ShutdownReport {
  cutRequests: number;
}

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

export async function startGateway({ config, upstream, logger, idempotencyStore, webhookLedger, redisLinks, explorer: explorerOptions, observability: given, apolloReportingUrl }: GatewayDeps): Promise<RunningGateway> {
  const links = redisLinks ?? new RedisLinks(logger);
  const observability = given ?? new Observability(config.observability, logger);
  const detachUpstream = upstream.observe?.(observability.upstream);
  const { server: httpServer, connections } = gatewayHttpServer(config.limits);
  let draining = false;
  const state = await startSharedState(config, links, logger, observability, idempotencyStore);
  const { keys, shared } = state;
  const { entityCache } = state;
  const polls = createPollWatches({ evict: (kind, id) => entityCache.evictObject(kind, id), logger });
  const contextDeps: ContextDeps = { config, keys, upstream, logger, entityCache, polls, idempotencyStore: state.idempotencyStore, observability };
  const ownSchema = () => {
    const built = buildSchema();
    observability.traceResolvers(built);
    return built;
  };
  const schema = ownSchema();
  const formatError = errorFormatter(config, logger);
  const limits = documentLimits(config, schema);
  const { documents, httpDocuments, streamDocuments } = limits;
  const explorer = gatewayExplorer(config.explorer, { endpoint: '/graphql', ...explorerOptions });
  const { apollo, compiler } = createApollo({ config, schema, compiledSchema: ownSchema, limits, formatError, logger, explorer, ...(apolloReportingUrl ? { apolloReportingUrl } : {}) });
  await apollo.start();

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
      validated: streamDocuments,
    },
    redis: shared.redis,
    onRateLimited: (limit) => observability.rateLimited(limit),
  });
  const streams = await startStreams({ config, logger, links, keys, httpServer, schema, context: contextDeps, admission, formatError, ledger: webhookLedger });
  observability.readFrom({
    routes: () => upstream.routeStats?.() ?? {},
    websocket: () => streams.websocket.stats(),
    redis: () => links.state(),
    idempotency: () => state.idempotencyStore.condition?.(),
    eventLog: () => streams.realtime.stats?.(),
    caches: () => ({
      compiled_queries: compiler?.cachedBytes() ?? 0,
      http_documents: httpDocuments.bytes(),
      persisted_queries: httpDocuments.persistedBytes(),
      stream_documents: streamDocuments.bytes,
      operation_prices: documents.check.cachedBytes(),
    }),
  });
  const ops = opsAccess(config.production, config.opsToken);
  const health = {
    subscriptions: () => streams.stats(),
    reconcile: () => ({ ...streams.reconciler.stats(), polled: polls.stats().watched, readsPerSecondCap: config.reconcile.readsPerSecond }),
    connections: () => connections.stats(),
    breakers: () => upstream.breakerStates?.() ?? {},
    redis: () => links.state(),
    idempotency: () => state.idempotencyStore.condition?.(),
    draining: () => draining,
  };

  const routes: Record<string, Route> = {
    '/graphql': createGraphQLRoute(apollo, contextDeps, admission, streams.callbacks),
    '/webhooks/payments': createWebhookReceiver({
      secrets: config.webhookSecrets,
      live: config.paymentsEnv === 'live',
      maxBodyBytes: config.webhookMaxBodyBytes,
      log: streams.realtime.log,
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
  const metrics = metricsConfig.enabled && metricsConfig.port !== null ? await startMetricsServer(observability, metricsConfig.port, metricsConfig.host) : null;

  dispatchRequests(httpServer, { routes, explorer: explorer.handle, sse: streams.sse, draining: () => draining, logger });
  const port = await listen(httpServer, config.port, config.host);
  const host = reachable(config.host);
  const metricsUrl = !metricsConfig.enabled ? null : (metrics?.url ?? `http://${host}:${port}/metrics`);
  return {
    url: `http://${host}:${port}/graphql`,
    port,
    boundAddress: (httpServer.address() as AddressInfo).address,
    server: httpServer,
    metricsUrl,
    metricsClosed: metricsUrl !== null && metrics === null && ops.closed ? METRICS_CLOSED : null,
    observability,
    async stop() {
      draining = true;
      links.closing();
      // Let load balancers see /readyz fail before the listener closes.
      if (config.shutdown.readinessDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdown.readinessDelayMs));
      // Streams first: the HTTP server cannot close while upgraded sockets remain.
      await streams.closeTransports();
      // The listener closes; in-flight requests get the grace period, then their connections are closed.
      const cutRequests = await connections.drain(config.shutdown.graceMs);
      await apollo.stop();
      await streams.closeCore();
      await state.closeOwnStore();
      await contextDeps.entityCache.close();
      await admission.close();
      shared.redis?.disconnect();
      detachUpstream?.();
      if (metrics) await new Promise<void>((resolve) => metrics.server.close(() => resolve()));
      if (!given) await observability.close();
      return { cutRequests };
    },
  };
}
