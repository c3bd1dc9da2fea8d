/**
 * The got transport (UPSTREAM_HTTP_CLIENT=got, the default): got is the
 * project's HTTP client from the start. One instance with keep-alive agents; got's own
 * retries and redirects are off, since resilience.ts decides what is sent
 * again and the key must never travel elsewhere. Its decompression is off
 * (so no accept-encoding is sent): got inflates with no bound, and a small
 * gzip answer can inflate to gigabytes. Answers are held to the byte cap.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import got, { RequestError, TimeoutError } from 'got';
import { UpstreamConnectionError, UpstreamTimeoutError, type UpstreamError } from './errors.js';
import { answerRefusal, defaultHeaders, keepAliveAgents, MAX_RESPONSE_BYTES, tooLarge, type Transport, type TransportOptions, type TransportRequest } from './transport.js';

export function createGotTransport(options: TransportOptions): Transport {
  const pool = keepAliveAgents();
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const instance = got.extend({
    agent: pool.agents,
    responseType: 'text',
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
    async send(url, req) {
      let refusal: UpstreamError | undefined;
      const refuse = (error: UpstreamError) => {
        if (refusal) return;
        refusal = error;
        // Rejects the call and destroys the request, socket included: its unread rest never returns to the pool.
        call.cancel();
      };
      const call = instance(url, {
          method: req.method,
          // got sets content-length for a string body, but no content-type (its `json` option would encode again).
          headers: req.body === undefined ? req.headers : { ...req.headers, 'content-type': 'application/json' },
          timeout: { request: req.timeoutMs },
          ...(req.body === undefined ? {} : { body: req.body }),
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        });
      // got reads the whole body before its own 'response': the headers are checked on node's, before any body byte.
      call.on('request', (outgoing: ClientRequest) => {
        outgoing.once('response', (res: IncomingMessage) => {
          const refused = answerRefusal(res.statusCode, res.headers, maxBytes, req.route);
          if (refused) refuse(refused);
        });
      });
      // `transferred` counts the bytes read so far (nothing is inflated): stop at the chunk that passes the cap.
      call.on('downloadProgress', ({ transferred }) => {
        if (transferred > maxBytes) refuse(tooLarge(req.route, maxBytes));
      });
      try {
        const response = await call;
        return { statusCode: response.statusCode, headers: response.headers, body: response.body };
      } catch (error) {
        if (refusal) throw refusal;
        // A caller's abort is not an upstream failure: surface the caller's reason, as fetch does.
        if (req.signal?.aborted) throw req.signal.reason;
        throw gotFailure(error, req);
      }
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
