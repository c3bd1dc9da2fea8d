/**
 * A minimal GraphQL client for typed documents: queries and mutations over
 * HTTP POST, subscriptions over graphql-ws, both on the gateway's /graphql.
 * The page is served with /graphql proxied to the gateway (vite.config.ts),
 * so it is same-origin and needs no CORS.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient } from 'graphql-ws';

const endpoint = new URL(import.meta.env.VITE_GATEWAY_URL ?? '/graphql', location.href);
/**
 * Sandbox only: a secret key in a browser is fine against the emulator, never
 * with a live key (README: put the key in your backend, not in the page).
 */
const key = import.meta.env.VITE_PAYMENTS_KEY ?? 'sk_sandbox_demo';

export class GraphQLRequestError extends Error {}

export async function request<R, V>(document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const body = (await res.json()) as { data?: R; errors?: { message: string; extensions?: { code?: string } }[] };
  if (body.errors?.length || !body.data) {
    const first = body.errors?.[0];
    throw new GraphQLRequestError(first ? `${first.extensions?.code ?? 'ERROR'}: ${first.message}` : `HTTP ${res.status}`);
  }
  return body.data;
}

const ws = createClient({
  url: endpoint.href.replace(/^http/, 'ws'),
  connectionParams: { authorization: `Bearer ${key}` },
  lazy: true,
});

/** Calls `onData` with each result; returns the function that ends the subscription. */
export function subscribe<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V, onData: (data: R) => void, onError: (e: unknown) => void): () => void {
  return ws.subscribe<R>(
    { query: print(document), variables },
    { next: (result) => (result.data ? onData(result.data as R) : onError(result.errors)), error: onError, complete: () => undefined },
  );
}
