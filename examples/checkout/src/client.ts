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

/** Said when no GraphQL answer comes back: the gateway is down, or a proxy in front of it answered instead. */
export const UNREACHABLE = 'The payment service cannot be reached. Check that the gateway is running (npm start), then try again.';

export async function request<R, V>(document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: print(document), variables }),
    });
  } catch {
    throw new GraphQLRequestError(UNREACHABLE);
  }
  // A dev server or proxy answers 502/504 with an empty or HTML body when the gateway is down.
  let body: { data?: R; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new GraphQLRequestError(`${UNREACHABLE} (HTTP ${res.status})`);
  }
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
    {
      next: (result) => (result.data ? onData(result.data as R) : onError(new GraphQLRequestError(result.errors?.[0]?.message ?? 'The status updates failed.'))),
      // graphql-ws reports a socket that could not open or closed as an Event or CloseEvent, not an Error.
      error: (e) => onError(e instanceof Error ? e : new GraphQLRequestError(UNREACHABLE)),
      complete: () => undefined,
    },
  );
}
