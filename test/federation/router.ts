/**
 * What a supergraph needs in a test: composition of subgraph SDLs with
 * @apollo/composition, a real @apollo/gateway router in front of the
 * subgraphs, and a recording proxy to see what reaches one subgraph.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { parse } from 'graphql';
import { createLogger } from '../../src/logger.js';

export interface SubgraphDefinition {
  name: string;
  url: string;
  sdl: string;
}

export function composeSupergraph(subgraphs: readonly SubgraphDefinition[]): string {
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: parse(s.sdl) })));
  if (result.errors) throw new Error(`composition failed:\n${result.errors.map((e) => e.message).join('\n')}`);
  return result.supergraphSdl;
}

interface RouterContext {
  authorization?: string;
}

export interface RunningRouter {
  url: string;
  stop(): Promise<void>;
}

/** The router forwards the caller's Authorization to the payments subgraph only, as docs/federation.md asks of a router. */
export async function startRouter(supergraphSdl: string): Promise<RunningRouter> {
  const gateway = new ApolloGateway({
    supergraphSdl,
    buildService: ({ name, url }) =>
      new RemoteGraphQLDataSource<RouterContext>({
        url,
        willSendRequest({ request, context }) {
          if (name === 'payments' && context.authorization) request.http?.headers.set('authorization', context.authorization);
        },
      }),
  });
  const server = new ApolloServer<RouterContext>({ gateway, logger: createLogger('silent') });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({ authorization: req.headers.authorization }),
  });
  return { url, stop: () => server.stop() };
}

export interface RecordedRequest {
  query: string;
  representations: unknown[] | undefined;
  authorization: string | undefined;
}

export interface RecordingProxy {
  url: string;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

/**
 * Forwards every request to `target` unchanged (and its answer, headers
 * included) and records the GraphQL
 * operations that went through: the subgraph's own view of the router.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const op = JSON.parse(body) as { query?: string; variables?: { representations?: unknown[] } };
        requests.push({ query: op.query ?? '', representations: op.variables?.representations, authorization: req.headers.authorization });
      } catch {
        requests.push({ query: '', representations: undefined, authorization: req.headers.authorization });
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) headers.set(name, value);
      }
      fetch(target, { method: req.method, headers, body: req.method === 'GET' ? undefined : body })
        .then(async (upstream) => {
          const text = await upstream.text();
          // The subgraph's own headers (Cache-Control above all: a router's response cache reads it).
          const headers: Record<string, string> = {};
          upstream.headers.forEach((value, name) => {
            if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) headers[name] = value;
          });
          res.writeHead(upstream.status, { 'content-type': 'application/json', ...headers });
          res.end(text);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    requests,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
