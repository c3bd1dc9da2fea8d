/**
 * Hive Gateway's runtime (the test/routers workspace) served over node:http
 * on 127.0.0.1, the way its CLI serves it: a test or bench talks HTTP to it
 * as a client would. The port is taken before the runtime is built, so the
 * gateway behind it can be told Hive's address (ROUTER_INVALIDATION_URL)
 * before Hive is told the gateway's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';

export interface HiveRuntime {
  (req: http.IncomingMessage, res: http.ServerResponse): void;
  fetch(url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<Response>;
  dispose(): Promise<void> | void;
}

const WORKSPACE_MODULES = new URL('./node_modules/', import.meta.url);

/**
 * A package of the test/routers workspace, as an ES module: Hive's CommonJS
 * builds are not the same program (the response cache's CJS build reads
 * Cache-Control through a missing `default` and fails every cacheable answer).
 */
export async function importHive<T>(name: string): Promise<T> {
  const dir = new URL(`${name}/`, WORKSPACE_MODULES);
  const manifest = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
    exports?: { '.'?: { import?: string | { default?: string } } };
    module?: string;
    main?: string;
  };
  const entry = manifest.exports?.['.']?.import;
  const file = (typeof entry === 'string' ? entry : entry?.default) ?? manifest.module ?? manifest.main ?? 'index.js';
  return (await import(new URL(file, dir).href)) as T;
}

export async function createHiveRuntime(config: Record<string, unknown>): Promise<HiveRuntime> {
  const { createGatewayRuntime } = await importHive<{ createGatewayRuntime(options: unknown): HiveRuntime }>('@graphql-hive/gateway-runtime');
  return createGatewayRuntime({ logging: false, ...config });
}

/** The in-memory cache Hive's CLI would use; the runtime alone needs one given for its response cache. */
export async function createHiveCache(): Promise<unknown> {
  const { default: InMemoryLRUCache } = await importHive<{ default: new (options?: { max?: number }) => unknown }>('@graphql-mesh/cache-inmemory-lru');
  return new InMemoryLRUCache({ max: 10_000 });
}

export interface HiveServer {
  url: string;
  port: number;
  /** Requests Hive answered outside /graphql (the invalidation endpoint), with their status. */
  seen: { method: string; path: string; status: number }[];
  /** Builds the runtime (once the gateway's address is known) and serves it. */
  serve(config: Record<string, unknown>): Promise<HiveRuntime>;
  stop(): Promise<void>;
}

export async function startHiveServer(): Promise<HiveServer> {
  let runtime: HiveRuntime | undefined;
  const seen: HiveServer['seen'] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://hive').pathname;
    if (path !== '/graphql') res.on('finish', () => seen.push({ method: req.method ?? '', path, status: res.statusCode }));
    if (runtime) runtime(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    port,
    seen,
    async serve(config) {
      runtime = await createHiveRuntime(config);
      return runtime;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime?.dispose();
    },
  };
}

/** The payments subgraph's SDL, as the supergraph is composed from it. */
export const PAYMENTS_SDL = readFileSync(new URL('../../supergraph/payments.graphql', import.meta.url), 'utf8');

/** The caller's key goes on to the subgraphs over HTTP (docs/routers.md, "Hive Gateway"). */
export const PROPAGATE_AUTHORIZATION = {
  fromClientToSubgraphs: ({ request }: { request: Request }) => ({ authorization: request.headers.get('authorization') ?? '' }),
};
