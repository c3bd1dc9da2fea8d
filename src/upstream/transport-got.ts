/**
 * The got transport (UPSTREAM_HTTP_CLIENT=got, the default): got is the
 * project's HTTP client from the start. One instance with keep-alive agents; got's own
 * retries and redirects are off, since resilience.ts decides what is sent
 * again and the key must never travel elsewhere.
 */
import got, { RequestError, TimeoutError } from 'got';
import { UpstreamConnectionError, UpstreamTimeoutError } from './errors.js';
import { defaultHeaders, keepAliveAgents, type Transport, type TransportOptions, type TransportRequest } from './transport.js';

export function createGotTransport(options: TransportOptions): Transport {
  const pool = keepAliveAgents();
  const instance = got.extend({
    agent: pool.agents,
    responseType: 'text',
    throwHttpErrors: false,
    // got never retries: resilience.ts does, only for repeatable calls and within the deadline.
    retry: { limit: 0 },
    timeout: { request: options.timeoutMs },
    // A redirect is unexpected from a JSON API; never carry the key elsewhere.
    followRedirect: false,
    headers: defaultHeaders(options.userAgent),
  });
  return {
    async send(url, req) {
      try {
        const response = await instance(url, {
          method: req.method,
          // got sets content-length for a string body, but no content-type (its `json` option would encode again).
          headers: req.body === undefined ? req.headers : { ...req.headers, 'content-type': 'application/json' },
          timeout: { request: req.timeoutMs },
          ...(req.body === undefined ? {} : { body: req.body }),
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        });
        return { statusCode: response.statusCode, headers: response.headers, body: response.body };
      } catch (error) {
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
