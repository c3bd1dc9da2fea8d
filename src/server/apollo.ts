/**
 * The Apollo Server behind POST /graphql, and the document limits and caches
 * it shares with the streaming transports (WebSocket, SSE, router callbacks).
 */
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTrace } from '@apollo/server/plugin/inlineTrace';
import { ApolloServerPluginUsageReporting } from '@apollo/server/plugin/usageReporting';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginUsageReportingDisabled } from '@apollo/server/plugin/disabled';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import { createErrorFormatter } from '../errors.js';
import type { Logger } from '../logger.js';
import { createCacheHints, type CacheHintRules } from '../graphql/cache-hints.js';
import { jitGateway } from '../graphql/jit-executor.js';
import { finalTests, isPendingKind, typeTtls } from '../cache/index.js';
import type { HttpContext } from '../http/graphql-route.js';
import { authGate } from '../http/auth-gate.js';
import { cacheHeaders } from '../http/cache-headers.js';
import { refusedKeyStatus } from '../http/refused-key-status.js';
import { loadTrustedDocuments } from '../limits/trusted-documents.js';
import { fairDocumentStore, UNPROVEN_OWNER, validatedDocuments } from '../limits/document-store.js';
import { documentRules, operationCheck, withoutSuggestions } from '../limits/graphql-limits.js';
import { documentCheck } from '../limits/document-check.js';
import { operationLoggerOf, operationTelemetryPlugin } from '../observability/index.js';
import type { GatewayExplorer } from '../explorer/gateway.js';

export function sharedDocuments(config: Readonly<Config>, schema: GraphQLSchema) {
  const caches = config.graphql.caches;
  // One document check for HTTP (Apollo Server) and the streaming transports (src/limits/document-check.ts).
  const documents = documentCheck(schema, {
    maxTokens: config.limits.maxTokens,
    rules: documentRules(config.limits),
    check: operationCheck(schema, config.limits, config.pagination, caches.callerShare),
    trusted: config.trustedDocumentsPath ? loadTrustedDocuments(config.trustedDocumentsPath) : null,
    maxResponseBytes: config.limits.maxResponseBytes,
  });
  // What a caller sends is kept in its own share of each cache; keys not accepted lately share one (docs/security.md).
  const ownerOf = (contextValue: unknown) => (contextValue as HttpContext).metricsOwner ?? UNPROVEN_OWNER;
  const httpDocuments = fairDocumentStore({ maxBytes: caches.documentBytes, callerShare: caches.callerShare }, ownerOf);
  const streamDocuments = validatedDocuments({ maxBytes: caches.documentBytes, callerShare: caches.callerShare });
  return { documents, ownerOf, httpDocuments, streamDocuments };
}

/** The one document check, and the caches of documents HTTP and the streams keep. */
export type SharedDocuments = ReturnType<typeof sharedDocuments>;

export function errorFormatter(config: Readonly<Config>, logger: Logger) {
  return createErrorFormatter({
    // With the operation's request id, so the masked error and the caller's report meet in the logs.
    onInternalError: (original, raised) => operationLoggerOf(raised, operationLoggerOf(original, logger)).error({ err: original }, 'internal error masked in a GraphQL response'),
    ...(config.graphql.suggestions ? {} : { requestMessage: withoutSuggestions }),
  });
}

export interface ApolloDeps {
  config: Readonly<Config>;
  schema: GraphQLSchema;
  compiledSchema: () => GraphQLSchema;
  documents: SharedDocuments;
  formatError: ReturnType<typeof errorFormatter>;
  logger: Logger;
  explorer: Pick<GatewayExplorer, 'apolloPlugins'>;
  apolloReportingUrl?: string;
}

export function createApollo({ config, schema, compiledSchema, documents: shared, formatError, logger, explorer, apolloReportingUrl }: ApolloDeps) {
  const { documents, ownerOf, httpDocuments } = shared;
  const caches = config.graphql.caches;
  const httpLimits = documents.apolloOptions(config.graphql.costExtensions ? { maximumAvailable: config.limits.maxCost } : null, ownerOf);
  // graphql-jit compiles queries unless turned off or usage reports are sent (they time every field,
  // which a compiled query does not let them see).
  const compiler = config.graphql.jit && !config.observability.apollo?.usageReporting
    ? jitGateway(schema, { cache: { maxBytes: caches.jitBytes, callerShare: caches.callerShare }, compiledSchema: compiledSchema(), ownerOf })
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
      ApolloServerPluginInlineTrace(),
      // Apollo's cache-control plugin hooks every field of every answer; cacheHeaders() decides once per document.
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
  return { apollo, compiler };
}

/** Behind a router usage reaches Apollo from the router; variables and headers are never sent. */
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

/** The entity cache's own TTLs, in seconds, by each kind's declaration (cache/entity-kinds.ts); lists, webhooks, events and logs are not kept. */
function cacheHintRules(config: Readonly<Config>): CacheHintRules {
  const seconds = (ms: number) => Math.floor(ms / 1000);
  const ttlMs = { final: config.entityCache.finalTtlMs, customer: config.entityCache.customerTtlMs, currency: config.currencyCacheTtlMs };
  const final = finalTests();
  const maxAge: Record<string, number> = {};
  const finalWhen: Record<string, (status: string) => boolean> = {};
  for (const [typename, ttl, kind] of typeTtls()) {
    maxAge[typename] = seconds(ttlMs[ttl]);
    if (ttl === 'final' && isPendingKind(kind)) finalWhen[typename] = final[kind];
  }
  return { maxAge, finalWhen };
}
