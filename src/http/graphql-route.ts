/**
 * `/graphql` over HTTP: Apollo Server 5 on node:http through its integration API, CORS, and the context of
 * each operation; its Apollo plugins beside it (auth-gate.ts, cache-headers.ts, refused-key-status.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import { createContext, type Context, type ContextDeps } from '../context.js';
import { ErrorCode } from '../errors.js';
import type { Admission, Caller } from '../access/admission.js';
import { clientAddress } from './client-address.js';
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
    const input = {
      caller,
      telemetry,
      // Every upstream call and retry of this operation stops at its deadline.
      deadlineAt: Date.now() + deps.config.operationDeadlineMs,
      ...(typeof headerKey === 'string' ? { idempotencyKeyHeader: headerKey } : {}),
      bypassCache: asksForFreshData(req.headers['cache-control']),
    };
    try {
      return createContext(deps, input, (context) => {
        // In production without the router's secret, the SDL goes to keys the upstream accepted: a made-up key
        // that merely looks right is proven (one upstream call) before the schema is shown to it.
        const proven = context.caller?.proven ?? false;
        const sdlAllowed = !production || (routerSharedSecret === null ? proven : fromRouter(req));
        const proveForSdl = production && routerSharedSecret === null && caller !== null ? () => admission.prove(caller) : null;
        // Only a key the upstream accepted lately may add operation names to the metrics: made-up keys share one allowance.
        const metricsOwner = proven ? context.callerId : undefined;
        return { authenticated: caller !== null, sdlAllowed, proveForSdl, metricsOwner };
      });
    } catch (error) {
      // Apollo reports a failed context without its plugins' error hooks: tell the formatter whose it is.
      attributeErrors([error], telemetry);
      throw error;
    }
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

export function setCorsHeaders(res: http.ServerResponse): void {
  // Bearer-token auth, no cookies: any origin (Apollo Sandbox, local frontends) may call.
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader('access-control-allow-headers', 'authorization, content-type, apollo-require-preflight, idempotency-key, x-apollo-operation-name, x-request-id, traceparent, tracestate');
  res.setHeader('access-control-max-age', '600');
  // A browser caller may read the request id to quote it to support.
  res.setHeader('access-control-expose-headers', 'x-request-id');
}
