/** `/graphql` over HTTP: Apollo Server 5 on node:http through its integration API, CORS, and the auth gate. */
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { HeaderMap, type ApolloServer, type ApolloServerPlugin, type GraphQLRequestContext } from '@apollo/server';
import { GraphQLError, Kind, type GraphQLFormattedError, valueFromASTUntyped, type DocumentNode, type OperationDefinitionNode, type ValueNode } from 'graphql';
import { createContext, type Context, type ContextDeps } from '../context.js';
import { ErrorCode, unauthenticated } from '../errors.js';
import type { Admission, Caller } from '../access/admission.js';
import { clientAddress } from './client-address.js';
import { cacheTagOf, isTagged } from '../cache/router-invalidation.js';
import { finalAnswer, type DocumentCacheHint } from '../graphql/cache-hints.js';
import { fragmentsOf, selectedFieldNames } from '../graphql/selection.js';
import { attributeErrors, withRequestId, type OperationTelemetry } from '../observability/index.js';
import { BodyTooLarge, readBody, refuseTooLarge, sendJson } from './body.js';
import { asksForCallback, type CallbackSubscriptions } from './subscription-callback.js';

/** Largest request body accepted from a caller with a key, on any route; GraphQL documents and variables are small. */
export const MAX_BODY_BYTES = 1024 * 1024;

const INCLUDE_TRACE_HEADER = 'apollo-federation-include-trace';
/** Set by the router (a `headers` rule in router.yaml) to prove it is the router. */
const ROUTER_SECRET_HEADER = 'x-router-secret';

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What a caller without a key may ask (introspection itself is still subject to GRAPHQL_INTROSPECTION). */
const PUBLIC_ROOT_FIELDS = new Set(['__schema', '__type', '__typename']);

/**
 * `sdlAllowed`: `_service { sdl }` may be answered. Outside production, to anyone; in production, to the
 * router by its secret when ROUTER_SHARED_SECRET is set, else to a caller with a key.
 */
export type HttpContext = Context & { authenticated: boolean; sdlAllowed: boolean; proveForSdl: (() => Promise<boolean>) | null; metricsOwner: string | undefined };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A refusal before Apollo sees it carries the request id and is counted by its code, like Apollo's own errors. */
function refusal(telemetry: OperationTelemetry, message: string, code: string, extra: Record<string, unknown> = {}) {
  const errors = [{ message, extensions: { code, ...extra } }];
  telemetry.refused(errors);
  return { errors: withRequestId(errors, telemetry.requestId) };
}

function refuse(res: http.ServerResponse, error: GraphQLError, telemetry: OperationTelemetry): void {
  const status = (error.extensions.http as { status?: number } | undefined)?.status ?? 401;
  res.setHeader('connection', 'close');
  sendJson(res, status, refusal(telemetry, error.message, String(error.extensions.code)));
}

/** `Cache-Control: no-cache` (or `no-store`) from the caller: this operation reads the upstream, not the entity cache. */
function asksForFreshData(header: string | undefined): boolean {
  return header !== undefined && /(?:^|,)\s*no-(?:cache|store)\s*(?:,|=|$)/i.test(header);
}

export function createGraphQLRoute(apollo: ApolloServer<HttpContext>, deps: ContextDeps, admission: Admission, callbacks?: CallbackSubscriptions) {
  const { documents } = admission;
  const { production } = deps.config;
  const { routerSharedSecret } = deps.config.graphql;
  const fromRouter = (req: http.IncomingMessage): boolean => {
    if (routerSharedSecret === null) return false;
    const given = req.headers[ROUTER_SECRET_HEADER];
    return typeof given === 'string' && safeEqual(given, routerSharedSecret);
  };
  const tracesAllowed = (req: http.IncomingMessage): boolean => (routerSharedSecret === null ? !production : fromRouter(req));

  const addressOf = clientAddress(deps.config.limits.trustedProxies);
  const contextFor = (req: http.IncomingMessage, caller: Caller | null, telemetry: OperationTelemetry) => async (): Promise<HttpContext> => {
    const headerKey = req.headers['idempotency-key'];
    let context: Context;
    try {
      context = createContext(deps, {
        caller,
        telemetry,
        // Every upstream call and retry of this operation stops at its deadline.
        deadlineAt: Date.now() + deps.config.operationDeadlineMs,
        ...(typeof headerKey === 'string' ? { idempotencyKeyHeader: headerKey } : {}),
        bypassCache: asksForFreshData(req.headers['cache-control']),
      });
    } catch (error) {
      // Apollo reports a failed context without its plugins' error hooks: tell the formatter whose it is.
      attributeErrors([error], telemetry);
      throw error;
    }
    // In production without the router's secret, the SDL goes to keys the upstream accepted: a made-up key
    // that merely looks right is proven (one upstream call) before the schema is shown to it.
    const proven = context.caller?.proven ?? false;
    const sdlAllowed = !production || (routerSharedSecret === null ? proven : fromRouter(req));
    const proveForSdl = production && routerSharedSecret === null && caller !== null ? () => admission.prove(caller) : null;
    // Added in place: a copy would read the context's lazy logger and build it.
    // Only a key the upstream accepted lately may add operation names to the metrics: made-up keys share one allowance.
    const metricsOwner = proven ? context.callerId : undefined;
    return Object.assign(context, { authenticated: caller !== null, sdlAllowed, proveForSdl, metricsOwner });
  };

  return async function handleGraphQL(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    setCorsHeaders(res);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    // Started before any refusal, so refused requests are counted and traced too; ended once answered.
    const telemetry = deps.observability.startOperation({ transport: 'http', headers: req.headers });
    res.setHeader('x-request-id', telemetry.requestId);
    try {
      await answer(req, res, url, telemetry);
    } finally {
      telemetry.end();
    }
  };

  async function answer(req: http.IncomingMessage, res: http.ServerResponse, url: URL, telemetry: OperationTelemetry): Promise<void> {
    // The caller first: a credential that can never work costs no body read, parse or validation.
    const read = admission.caller(req.headers.authorization);
    if (read instanceof Error) return refuse(res, read, telemetry);
    const limited = await admission.operation(read, addressOf(req));
    if (limited) {
      res.setHeader('retry-after', String(limited.retryAfterSeconds));
      const whose = limited.by === 'address' ? 'from this address' : 'for this API key';
      return sendJson(res, 429, refusal(telemetry, `Too many operations ${whose}; retry later.`, ErrorCode.RATE_LIMITED, { retryAfterSeconds: limited.retryAfterSeconds }));
    }
    // Without a key only introspection and the federation SDL can run: small documents.
    const maxBytes = read ? MAX_BODY_BYTES : deps.config.limits.maxAnonymousBodyBytes;
    const raw = await readBody(req, maxBytes);
    if (raw instanceof BodyTooLarge) {
      return refuseTooLarge(req, res, refusal(telemetry, `Request body too large: at most ${maxBytes} bytes${read ? '' : ' without an API key'}.`, 'BAD_REQUEST'));
    }
    let body: unknown = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendJson(res, 400, refusal(telemetry, 'The request body is not valid JSON.', 'BAD_REQUEST'));
      }
    }
    // Before the trusted-document rewrite: the callback transport admits the document itself, as WebSocket and SSE do.
    if (callbacks && req.method === 'POST' && asksForCallback(body)) {
      const opened = await callbacks.open(req, body, read, fromRouter(req));
      if (!('message' in opened)) {
        // The handshake's own line in the metrics; the subscription's events have theirs (transport "callback").
        telemetry.answered(null, opened.result.errors as GraphQLFormattedError[] | undefined);
        sendJson(res, 200, opened.result);
        opened.started?.();
        return;
      }
      if (opened.retryAfterSeconds !== undefined) res.setHeader('retry-after', String(opened.retryAfterSeconds));
      return sendJson(res, opened.status, refusal(telemetry, opened.message, opened.code, opened.extra));
    }
    // The document check's own entrance (limits/document-check.ts, as for streams): the trusted text, before Apollo parses it.
    if (documents.trusted) {
      const text = isRecord(body) && req.method === 'POST' ? documents.source(body) : null;
      if (typeof text !== 'string') {
        return sendJson(res, 400, refusal(telemetry, 'Only trusted documents run here: send a documentId or persisted-query hash from the manifest (POST).', 'PERSISTED_QUERY_NOT_FOUND'));
      }
      const { documentId: _id, extensions, ...rest } = body as Record<string, unknown>;
      const { persistedQuery: _hash, ...otherExtensions } = isRecord(extensions) ? extensions : {};
      body = { ...rest, query: text, ...(Object.keys(otherExtensions).length > 0 ? { extensions: otherExtensions } : {}) };
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    // Inline traces (ftv1) reveal resolver timings: only for the router, when it is known.
    if (!tracesAllowed(req)) headers.delete(INCLUDE_TRACE_HEADER);
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body },
      context: contextFor(req, read, telemetry),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      // A GraphQL answer, not the landing page: capped in size (MAX_RESPONSE_BYTES).
      const isAnswer = response.headers.get('content-type')?.includes('json') ?? false;
      res.end(isAnswer ? documents.capAnswer(response.body.string, telemetry) : response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  }
}

/**
 * A key the payments API refuses answers HTTP 401 every time: the door answers 401 once the refusal is
 * known, so the answer that learns it (an UNAUTHENTICATED error from the upstream's 401) says the same.
 */
export const refusedKeyStatus: ApolloServerPlugin<HttpContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        if (response.body.kind !== 'single') return;
        const errors = response.body.singleResult.errors;
        if (errors?.some((e) => e.extensions?.code === ErrorCode.UNAUTHENTICATED)) response.http.status = 401;
      },
    };
  },
};

/** Kept by no cache; `private` too, so a cache that misreads `no-store` still never shares it across keys. */
const NOT_STORED = 'private, no-store';

/**
 * `Cache-Control` as routers' response caches read it: `private` always (an answer is one key's), else from the
 * document's cache hint. Apollo's cache-control plugin is off: it hooks every field of every answer.
 */
export function cacheHeaders(hintOf: (document: DocumentNode, operationName: string | undefined) => DocumentCacheHint): ApolloServerPlugin<HttpContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, document, operation, operationName, errors, request }) {
          const cacheControl = cacheControlOf(response.body, document, operationName ?? undefined, errors?.length ?? 0);
          response.http.headers.set('cache-control', cacheControl);
          // What a router may keep is tagged, so the gateway's invalidations (cache/router-invalidation.ts) reach it.
          if (cacheControl !== NOT_STORED && operation && response.body.kind === 'single') {
            const result = response.body.singleResult;
            result.extensions = { ...result.extensions, ...cacheTagsOf(operation, request.variables ?? {}) };
          }
        },
      };
    },
  };

  function cacheControlOf(body: { kind: string; singleResult?: { data?: unknown; errors?: unknown } }, document: DocumentNode | undefined, operationName: string | undefined, errors: number): string {
    if (!document || errors > 0 || body.kind !== 'single' || body.singleResult?.errors) return NOT_STORED;
    const hint = hintOf(document, operationName);
    if (hint.maxAge <= 0 || !finalAnswer(body.singleResult?.data, hint.statusChecks, hint.holders, hint.roots)) return NOT_STORED;
    return `private, max-age=${hint.maxAge}`;
  }
}

const TAGGED_ROOTS: Readonly<Record<string, string>> = { transaction: 'transaction', payout: 'payout', customer: 'customer' };

/**
 * Apollo Router's cache tags for an answer it may keep: `apolloEntityCacheTags`, one list per
 * representation of `_entities`, and `apolloCacheTags` for root fields reading one object by id.
 */
function cacheTagsOf(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const rootTags: string[] = [];
  let entityTags: string[][] | undefined;
  const valueOf = (node: ValueNode) => valueFromASTUntyped(node, variables);
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const args = Object.fromEntries((selection.arguments ?? []).map((a) => [a.name.value, valueOf(a.value)]));
    if (selection.name.value === '_entities' && Array.isArray(args.representations)) {
      entityTags = args.representations.map((r: unknown) => {
        const { __typename: typename, id } = (typeof r === 'object' && r !== null ? r : {}) as Record<string, unknown>;
        const kind = typeof typename === 'string' ? typename.toLowerCase() : '';
        return isTagged(kind) && (typeof id === 'string' || typeof id === 'number') ? [cacheTagOf(kind, id)] : [];
      });
    }
    const kind = TAGGED_ROOTS[selection.name.value];
    if (kind && (typeof args.id === 'string' || typeof args.id === 'number')) rootTags.push(cacheTagOf(kind, args.id));
  }
  return { ...(entityTags ? { apolloEntityCacheTags: entityTags } : {}), ...(rootTags.length > 0 ? { apolloCacheTags: rootTags } : {}) };
}

/** Refuses before any resolver an operation that needs a caller and has none, and a subscription (HTTP cannot carry it). */
export function authGate({ routerSecretSet }: { routerSecretSet: boolean }): ApolloServerPlugin<HttpContext> {
  // Who may read the SDL in production (HttpContext.sdlAllowed): the router by its secret when one is set, else any caller with a key.
  const sdlRefused = routerSecretSet
    ? 'The subgraph SDL is served to the router only: send its x-router-secret (ROUTER_SHARED_SECRET).'
    : 'The subgraph SDL is served to callers with an API key the payments API accepts: send "Authorization: Bearer <secret API key>".';
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, operation, document, request }: GraphQLRequestContext<HttpContext>) {
          if (!operation) return;
          if (operation.operation === 'subscription') {
            throw new GraphQLError('Subscriptions are served over GraphQL over WebSocket (graphql-ws) at this same path, or as Server-Sent Events (send "Accept: text/event-stream").', {
              extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
            });
          }
          // Neither refusal below can apply: skip the walk of the root fields (most operations).
          if (contextValue.authenticated && contextValue.sdlAllowed) return;
          const rootFields = selectedFieldNames(operation.selectionSet, fragmentsOf(document?.definitions ?? []), request.variables ?? {});
          if (rootFields.includes('_service') && !contextValue.sdlAllowed && !(await contextValue.proveForSdl?.())) {
            throw unauthenticated(sdlRefused);
          }
          if (contextValue.authenticated) return;
          if (rootFields.every((name) => PUBLIC_ROOT_FIELDS.has(name) || name === '_service')) return;
          throw unauthenticated('Authentication required: send "Authorization: Bearer <secret API key>".');
        },
      };
    },
  };
}

export function setCorsHeaders(res: http.ServerResponse): void {
  // Bearer-token auth, no cookies: any origin (Apollo Sandbox, local frontends) may call.
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader('access-control-allow-headers', 'authorization, content-type, apollo-require-preflight, idempotency-key, x-apollo-operation-name, x-request-id, traceparent, tracestate');
  res.setHeader('access-control-max-age', '600');
  // A browser caller may read the request id to quote it to support.
  res.setHeader('access-control-expose-headers', 'x-request-id');
}
