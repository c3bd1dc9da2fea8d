/**
 * The seam under call.ts: one HTTP exchange, nothing more. call.ts builds the
 * URL, the headers and the JSON body, and applies the resilience rules around each
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
 * - no compression asked for, and an answer refused unread when its
 *   headers name a content-encoding or a length over the byte cap, or as
 *   soon as the bytes read pass it (`answerRefusal`, `chunkRefusal`);
 *   likewise when they would pass the bytes in flight its lease may hold
 *   (`request.bytes`, byte-budget.ts).
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { ByteLease } from './byte-budget.js';
import { UpstreamInvalidResponseError, UpstreamResponseTooLargeError, UpstreamUnavailableError, type UpstreamError } from './errors.js';

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
  /** JSON text, already encoded by call.ts (encodeJsonBody: amounts from their digits). */
  body?: string;
  /** The whole attempt: connecting, sending, and reading the answer to its end. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** The bytes this answer may hold (byte-budget.ts): grown to the declared length, then as bytes arrive. */
  bytes?: ByteLease;
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
  /** The cap on an answer's body, in bytes as they arrive (default MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
}

/**
 * The largest page the emulator can answer (100 transactions of about 1 MiB of metadata each,
 * its request-body cap) is 100 MiB; this leaves room above it. A larger answer is a broken or
 * hostile upstream, refused without being read further (and far below V8's string limit).
 */
export const MAX_RESPONSE_BYTES = 128 * 1024 * 1024;

/**
 * What the headers alone refuse, before a byte of the body is read: an answer
 * whose declared length passes the cap, or one in a content-encoding. Neither
 * transport asks for compression (inflating is where a small answer becomes a
 * huge one), so an encoded answer is one the gateway did not ask for.
 */
export function answerRefusal(status: number | undefined, headers: IncomingHttpHeaders, maxBytes: number, route: string, lease?: ByteLease): UpstreamError | undefined {
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  // An error status tells what happened whatever its body says (a 401 must still revoke the key): read it, bounded.
  if (encoding && encoding !== 'identity' && !(status !== undefined && status >= 400)) return new UpstreamInvalidResponseError({ route, detail: 'an encoded answer (content-encoding), which the gateway does not ask for' });
  const length = Number(headers['content-length']);
  if (Number.isFinite(length) && length > maxBytes) return tooLarge(route, maxBytes);
  // Reserved whole before the first byte, so a key's many huge reads are refused before any is read.
  if (lease && Number.isFinite(length) && !lease.grow(length)) return bytesBusy(route);
  return undefined;
}

/**
 * One chunk's worth of checks, shared by both transports: `read` bytes so far (nothing is inflated)
 * against the per-answer cap, then against the bytes in flight the lease may hold.
 */
export function chunkRefusal(read: number, maxBytes: number, route: string, lease: ByteLease | undefined): UpstreamError | undefined {
  if (read > maxBytes) return tooLarge(route, maxBytes);
  if (lease && !lease.grow(read)) return bytesBusy(route);
  return undefined;
}

export function bytesBusy(route: string): UpstreamUnavailableError {
  return new UpstreamUnavailableError({ route, reason: 'bytes_in_flight' });
}

export function tooLarge(route: string, maxBytes: number): UpstreamResponseTooLargeError {
  return new UpstreamResponseTooLargeError({ route, maxBytes });
}

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
