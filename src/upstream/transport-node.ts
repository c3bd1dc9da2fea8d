/**
 * The node:http transport (UPSTREAM_HTTP_CLIENT=node): by hand what got did, keeping the promises
 * of docs/architecture.md, "The upstream transport": one timer over the whole attempt (a socket
 * time-out alone lets a trickling upstream hold the call), and a socket destroyed on time-out or
 * abort so a half-read answer never returns to the pool.
 */
import http from 'node:http';
import https from 'node:https';
import { UpstreamConnectionError, UpstreamTimeoutError } from './errors.js';
import { answerRefusal, BodyText, chunkRefusal, defaultHeaders, keepAliveAgents, MAX_RESPONSE_BYTES, type KeepAliveAgents, type Transport, type TransportOptions, type TransportRequest, type TransportResponse } from './transport.js';

export function createNodeTransport(options: TransportOptions): Transport {
  const pool = keepAliveAgents();
  const defaults = defaultHeaders(options.userAgent);
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  return {
    send: (url, req) => send(url, req, defaults, pool.agents, maxBytes),
    close: pool.destroy,
  };
}

function send(
  url: URL,
  req: TransportRequest,
  defaults: Record<string, string>,
  agents: KeepAliveAgents['agents'],
  maxBytes: number,
): Promise<TransportResponse> {
  const { signal } = req;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const headers: Record<string, string> = { ...defaults, ...req.headers };
  if (req.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(req.body));
  }
  const secure = url.protocol === 'https:';
  const requestOptions = { method: req.method, headers, agent: secure ? agents.https : agents.http };

  return new Promise<TransportResponse>((resolve, reject) => {
    let outgoing: http.ClientRequest | undefined;
    let settled = false;
    // Runs once: whatever comes later (the error a destroy raises, a late chunk) is ignored.
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    // The error names the route and the system code only: the request options hold the Authorization header.
    const failed = (error: unknown) => settle(() => reject(new UpstreamConnectionError({ route: req.route, ...systemCode(error) })));
    const timer = setTimeout(() => {
      settle(() => reject(new UpstreamTimeoutError({ route: req.route, timeoutMs: req.timeoutMs })));
      outgoing?.destroy();
    }, req.timeoutMs);
    // A caller's abort is not an upstream failure: surface the caller's reason, as fetch does.
    const onAbort = () => {
      settle(() => reject(signal?.reason));
      outgoing?.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    try {
      outgoing = (secure ? https : http).request(url, requestOptions, (res) => {
        // Refused unread (or at the chunk that passes the cap): the socket goes, with whatever was still coming.
        const refuse = (error: Error) => {
          settle(() => reject(error));
          outgoing?.destroy();
        };
        const refusal = answerRefusal(res.statusCode, res.headers, maxBytes, req.route, req.bytes);
        if (refusal) return refuse(refusal);
        const body = new BodyText();
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          bytes += chunk.length;
          const refused = chunkRefusal(bytes, maxBytes, req.route, req.bytes);
          if (refused) return refuse(refused);
          body.add(chunk);
        });
        res.on('end', () => settle(() => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: body.text() })));
        res.on('error', failed);
        // The connection closed before the body ended, with no error of its own.
        res.on('close', () => {
          if (!res.complete) failed({ code: 'ECONNRESET' });
        });
      });
      outgoing.on('error', failed);
      outgoing.end(req.body);
    } catch (error) {
      // node:http refused the request before any I/O (a header value it cannot send): classed as got
      // classes it, by its code alone, since its message may quote the header.
      failed(error);
    }
  });
}

function systemCode(error: unknown): { systemCode?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { systemCode: code } : {};
}
