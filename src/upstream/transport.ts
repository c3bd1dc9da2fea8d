/**
 * The seam under http.ts: one HTTP exchange, nothing more. http.ts builds the
 * URL, the headers and the JSON body, and runs resilience.ts around each
 * attempt; a transport sends what it is given and hands back the status, the
 * headers and the body as text. Two implement it, chosen by
 * UPSTREAM_HTTP_CLIENT: got (transport-got.ts, the project's first client and
 * the default) and bare node:http (transport-node.ts, about 5x less CPU per call;
 * figures in bench/README.md). Both keep the same promises, which the
 * upstream tests check against each:
 * - keep-alive sockets (at most 256 per origin), no retries, no redirects;
 * - the default headers below on every call, and `content-type:
 *   application/json` with a `content-length` when there is a body;
 * - one time-out over the whole attempt (connect, headers and body);
 * - the caller's abort rejects with `signal.reason`;
 * - failures become `UpstreamTimeoutError` or `UpstreamConnectionError`,
 *   which carry the route and at most a system code: never the request
 *   options, which hold the Authorization header.
 * They differ in two things: got asks for compressed answers and
 * decompresses them, node asks for none; node refuses an answer over
 * MAX_BODY_CHARS.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

/** The values of UPSTREAM_HTTP_CLIENT; the first is the default. */
export const HTTP_CLIENTS = ['got', 'node'] as const;
export type HttpClientName = (typeof HTTP_CLIENTS)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface TransportRequest {
  /** The route label (`GET /v1/customers/:id`), for the errors a failure becomes. */
  route: string;
  method: HttpMethod;
  /** Per-call headers (authorization, idempotency key, request id, trace); the defaults are added by the transport. */
  headers: Record<string, string>;
  /** JSON text, already encoded by http.ts (encodeJsonBody: amounts from their digits). */
  body?: string;
  /** The whole attempt: connecting, sending, and reading the answer to its end. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** Read as UTF-8 text; decode.ts parses it. */
  body: string;
}

export interface Transport {
  send(url: URL, request: TransportRequest): Promise<TransportResponse>;
  /** Destroys the pooled keep-alive sockets. */
  close(): void;
}

export interface TransportOptions {
  /** Default whole-attempt time-out; each request passes its own (shrunk to the operation's deadline). */
  timeoutMs: number;
  userAgent?: string;
  /** The node transport's cap on an answer's length, in characters (default MAX_BODY_CHARS). */
  maxBodyChars?: number;
}

/**
 * No answer of the payments API comes near this: a larger one is a broken upstream or proxy,
 * refused as a connection failure. It is there so that a string past V8's limit never throws
 * where nothing catches it (which would end the process), not to bound memory tightly.
 */
export const MAX_BODY_CHARS = 64 * 1024 * 1024;

export const SOURCE = 'payments-graphql-gateway';

/** Sent on every call (docs/upstream.md, Authentication and environments). */
export function defaultHeaders(userAgent: string | undefined): Record<string, string> {
  return {
    accept: 'application/json',
    'user-agent': userAgent ?? SOURCE,
    'x-version': 'v1',
    'x-source': SOURCE,
  };
}

/** Both transports pool this many sockets per origin, as got's agents always did. */
const MAX_SOCKETS = 256;

export interface KeepAliveAgents {
  agents: { http: http.Agent; https: https.Agent };
  /** Destroys the pooled sockets: the transport's `close`. */
  destroy(): void;
}

/** The keep-alive agents a transport pools its sockets in, one per protocol. */
export function keepAliveAgents(): KeepAliveAgents {
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
    https: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  };
  return {
    agents,
    destroy: () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
