/**
 * Hive Gateway's runtime (the test/routers workspace) served over node:http
 * on 127.0.0.1, the way its CLI serves it: a test or bench talks HTTP to it
 * as a client would. The port is taken before the runtime is built, so the
 * gateway behind it can be told Hive's address (ROUTER_INVALIDATION_URL)
 * before Hive is told the gateway's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

export interface HiveRuntime {
  (req: http.IncomingMessage, res: http.ServerResponse): void;
  fetch(url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<Response>;
  dispose(): Promise<void> | void;
}

const requireHive = createRequire(new URL('./package.json', import.meta.url));

/** A module of the test/routers workspace (Hive's runtime, its plugins and transports). */
export function hiveModule<T>(name: string): T {
  return requireHive(name) as T;
}

export function createHiveRuntime(config: Record<string, unknown>): HiveRuntime {
  const { createGatewayRuntime } = hiveModule<{ createGatewayRuntime(options: unknown): HiveRuntime }>('@graphql-hive/gateway-runtime');
  return createGatewayRuntime({ logging: false, ...config });
}

/** The in-memory cache Hive's CLI would use; the runtime alone needs one given for its response cache. */
export function createHiveCache(): unknown {
  const { default: InMemoryLRUCache } = hiveModule<{ default: new (options?: { max?: number }) => unknown }>('@graphql-mesh/cache-inmemory-lru');
  return new InMemoryLRUCache({ max: 10_000 });
}

export interface HiveServer {
  url: string;
  port: number;
  /** Builds the runtime (once the gateway's address is known) and serves it. */
  serve(config: Record<string, unknown>): HiveRuntime;
  stop(): Promise<void>;
}

export async function startHiveServer(): Promise<HiveServer> {
  let runtime: HiveRuntime | undefined;
  const server = http.createServer((req, res) => {
    if (runtime) runtime(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    port,
    serve(config) {
      runtime = createHiveRuntime(config);
      return runtime;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime?.dispose();
    },
  };
}

/** The caller's key goes on to the subgraphs over HTTP (docs/federation.md, "Hive Gateway"). */
export const PROPAGATE_AUTHORIZATION = {
  fromClientToSubgraphs: ({ request }: { request: Request }) => ({ authorization: request.headers.get('authorization') ?? '' }),
};
