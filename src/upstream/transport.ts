/**
 * The seam under call.ts: one HTTP exchange, nothing more. Its two implementations and the
 * promises both keep (no retries, no redirects, errors never holding the request options, whose
 * headers hold the key): docs/architecture.md, "The upstream transport".
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import type { ByteLease } from './byte-budget.js';
import { UpstreamInvalidResponseError, UpstreamResponseTooLargeError, UpstreamUnavailableError, type UpstreamError } from './errors.js';

/** The values of UPSTREAM_HTTP_CLIENT; the first is the default. */
export const HTTP_CLIENTS = ['got', 'node'] as const;
export type HttpClientName = (typeof HTTP_CLIENTS)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface TransportRequest {
  route: string;
  method: HttpMethod;
  /** Per-call headers; the transport adds the defaults. */
  headers: Record<string, string>;
  body?: string;
  /** Over the whole attempt: connecting, sending, and reading the answer to its end. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Grown to the declared length, then as bytes arrive. */
  bytes?: ByteLease;
}

export interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Transport {
  send(url: URL, request: TransportRequest): Promise<TransportResponse>;
  close(): void;
}

export interface TransportOptions {
  timeoutMs: number;
  userAgent?: string;
  maxResponseBytes?: number;
}

/** Above the emulator's largest page (100 MiB); anything larger is a broken or hostile upstream. */
export const MAX_RESPONSE_BYTES = 128 * 1024 * 1024;

/** Compression was never asked for (inflating is where a small answer becomes a huge one), so an encoded answer is refused unread. */
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
 * A body's text, decoded chunk by chunk as it arrives (a character split across chunks stays whole, as
 * StringDecoder keeps its bytes). Concatenating a 90 MB body and decoding it at its end were two copies
 * in one turn of the event loop; now the decoding is spread over the chunks and one copy, the join, is left.
 */
export class BodyText {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parts: string[] = [];

  add(chunk: Buffer): void {
    this.parts.push(this.decoder.write(chunk));
  }

  text(): string {
    const rest = this.decoder.end();
    if (rest !== '') this.parts.push(rest);
    return this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
  }
}

/** Shared by both transports; `read` counts raw bytes, nothing being inflated. */
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
  destroy(): void;
}

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
