/**
 * A minimal GraphQL client for typed documents: queries and mutations over
 * HTTP POST, subscriptions over graphql-ws, both on the gateway's /graphql.
 * The page is served with /graphql proxied to the gateway (vite.config.ts),
 * so it is same-origin and needs no CORS. Failures come out as a
 * `GatewayError` with a code; the page puts them in words (words.ts) and
 * never shows the gateway's own text.
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
/** The sandbox's phone numbers mean something only with a sandbox key. */
export const SANDBOX = key.startsWith('sk_sandbox_');

/** `UNREACHABLE` when no GraphQL answer came back (the gateway is down, or a proxy answered for it); else the gateway's error code. */
export class GatewayError extends Error {
  constructor(
    readonly code: string,
    /** What the gateway or the network said, for the developer's console only. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

export async function request<R, V>(document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: print(document), variables }),
    });
  } catch (e) {
    throw new GatewayError('UNREACHABLE', String(e));
  }
  // A dev server or proxy answers 500/502/504 with an empty or HTML body when the gateway is down.
  let body: { data?: R; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new GatewayError('UNREACHABLE', `HTTP ${res.status} without a GraphQL answer`);
  }
  const first = body.errors?.[0];
  if (first) throw new GatewayError(first.extensions?.code ?? 'ERROR', first.message);
  if (!body.data) throw new GatewayError('UNREACHABLE', `HTTP ${res.status} without data`);
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
      next: (result) => {
        const first = result.errors?.[0];
        if (first || !result.data) onError(new GatewayError(String(first?.extensions?.code ?? 'ERROR'), first?.message ?? 'no data'));
        else onData(result.data as R);
      },
      // graphql-ws reports a socket that could not open or closed as an Event or CloseEvent, not an Error.
      error: (e) => onError(e instanceof Error ? e : new GatewayError('UNREACHABLE', 'the status updates could not connect')),
      complete: () => undefined,
    },
  );
}
