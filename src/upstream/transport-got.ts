/**
 * The got transport (UPSTREAM_HTTP_CLIENT=got, the default); why its retries, redirects and
 * decompression are off: docs/architecture.md, "The upstream transport". The stream API is read
 * rather than the promise API: the same request for less of got's work (bench/README.md).
 */
import type { IncomingMessage } from 'node:http';
import got, { RequestError, TimeoutError } from 'got';
import { UpstreamConnectionError, UpstreamTimeoutError } from './errors.js';
import { answerRefusal, BodyText, chunkRefusal, defaultHeaders, keepAliveAgents, MAX_RESPONSE_BYTES, type Transport, type TransportOptions, type TransportRequest, type TransportResponse } from './transport.js';

export function createGotTransport(options: TransportOptions): Transport {
  const pool = keepAliveAgents();
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const instance = got.extend({
    agent: pool.agents,
    throwHttpErrors: false,
    // got never retries: resilience.ts does, only for repeatable calls and within the deadline.
    retry: { limit: 0 },
    timeout: { request: options.timeoutMs },
    // A redirect is unexpected from a JSON API; never carry the key elsewhere.
    followRedirect: false,
    // Nothing is inflated, so the bytes counted below are the bytes held.
    decompress: false,
    headers: defaultHeaders(options.userAgent),
  });
  return {
    send(url, req) {
      return new Promise<TransportResponse>((resolve, reject) => {
        const stream = instance.stream(url, {
          method: req.method,
          // got sets content-length for a string body, but no content-type (its `json` option would encode again).
          headers: req.body === undefined ? req.headers : { ...req.headers, 'content-type': 'application/json' },
          timeout: { request: req.timeoutMs },
          ...(req.body === undefined ? {} : { body: req.body }),
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        });
        // A stream's write side stays open for a piped body: a POST, PUT or DELETE without one is ended here.
        if (req.body === undefined && req.method !== 'GET') stream.end();
        let settled = false;
        const fail = (error: unknown) => {
          if (settled) return;
          settled = true;
          // Destroys the request, socket included: its unread rest never returns to the pool.
          stream.destroy();
          reject(error);
        };
        let response: IncomingMessage | undefined;
        const body = new BodyText();
        let bytes = 0;
        // Emitted with the headers, before any body byte.
        stream.once('response', (res: IncomingMessage) => {
          response = res;
          const refused = answerRefusal(res.statusCode, res.headers, maxBytes, req.route, req.bytes);
          if (refused) fail(refused);
        });
        // Counted as read (nothing is inflated): stop at the chunk that passes the cap or the bytes in flight.
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          bytes += chunk.length;
          const refused = chunkRefusal(bytes, maxBytes, req.route, req.bytes);
          if (refused) fail(refused);
          else body.add(chunk);
        });
        stream.once('end', () => {
          if (settled) return;
          settled = true;
          resolve({ statusCode: response!.statusCode!, headers: response!.headers, body: body.text() });
        });
        stream.once('error', (error: unknown) => {
          // A caller's abort is not an upstream failure: surface the caller's reason, as fetch does.
          fail(req.signal?.aborted ? req.signal.reason : gotFailure(error, req));
        });
      });
    },
    close: pool.destroy,
  };
}

function gotFailure(error: unknown, req: TransportRequest): unknown {
  if (error instanceof TimeoutError) return new UpstreamTimeoutError({ route: req.route, timeoutMs: req.timeoutMs });
  // got's errors carry the request options, Authorization included: keep only the system code.
  if (error instanceof RequestError) return new UpstreamConnectionError({ route: req.route, systemCode: error.code });
  return error;
}
