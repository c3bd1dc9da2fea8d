/** The node:http side of the gateway: which route answers a request, the listener, the metrics port. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { guardConnections } from '../http/connections.js';
import { ignoredAfterRefusal, isClientAbort, sendJson } from '../http/body.js';
import { MAX_BODY_BYTES } from '../http/graphql-route.js';
import type { Observability } from '../observability/index.js';

/** Connections capped per client address too: one address cannot hold every slot. */
export function gatewayHttpServer(limits: Config['limits']) {
  const server = http.createServer({
    // A slow client cannot hold a connection open: whole request in 30 s, headers in 10 s.
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    keepAliveTimeout: 5_000,
  });
  server.maxConnections = limits.maxHttpConnections;
  // Idle connections are closed near the cap; at shutdown it drains the server, counting the requests it cut.
  const connections = guardConnections(server, {
    maxConnections: limits.maxHttpConnections,
    perAddress: limits.maxHttpConnectionsPerAddress,
    trustedProxies: limits.trustedProxies,
  });
  return { server, connections };
}

export type Route = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

export interface Dispatch {
  routes: Record<string, Route>;
  explorer(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  sse: { wants(req: http.IncomingMessage): boolean; handle(req: http.IncomingMessage, res: http.ServerResponse): void | Promise<void> };
  draining(): boolean;
  logger: Logger;
}

export function dispatchRequests(server: http.Server, { routes, explorer, sse, draining, logger }: Dispatch): void {
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (draining()) res.setHeader('connection', 'close');
    const wantsSse = sse.wants(req);
    if (!wantsSse && explorer(req, res)) return;
    const route: Route =
      url.pathname === '/graphql' && wantsSse
        ? (request, response) => sse.handle(request, response)
        : (routes[url.pathname] ?? ((_req, response) => sendJson(response, 404, { error: 'not found' })));
    Promise.resolve(route(req, res, url)).catch((error: unknown) => {
      if (isClientAbort(error)) {
        logger.debug({ path: url.pathname }, 'client went away mid-request');
        return;
      }
      logger.error({ err: error }, 'request handling failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  };

  // `Expect: 100-continue`: the body is invited only when no route would refuse it for its size;
  // a larger one gets its 413 before the client sends a byte of it.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > MAX_BODY_BYTES)) res.writeContinue();
    server.emit('request', req, res);
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (ignoredAfterRefusal(req)) return;
    // A request pipelined behind others runs when its answer's turn comes, not when it is parsed:
    // Node never gives that turn to one queued behind an answer that closes the connection (a 413).
    if (res.socket) serve(req, res);
    else res.once('socket', () => serve(req, res));
  });
}

export async function listen(server: http.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

export function reachable(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
}

export async function startMetricsServer(observability: Observability, port: number, host: string): Promise<{ server: http.Server; url: string }> {
  const route = observability.metricsRoute();
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://metrics');
    if (pathname !== '/metrics') return sendJson(res, 404, { error: 'not found' });
    route(req, res).catch(() => res.destroy());
  });
  const bound = await listen(server, port, host);
  return { server, url: `http://${reachable(host)}:${bound}/metrics` };
}
