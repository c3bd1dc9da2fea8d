/** An Apollo plugin: which operations an HTTP caller may run without a key, and who may read the subgraph SDL. */
import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { unauthenticated } from '../errors.js';
import { fragmentsOf, selectedFieldNames } from '../graphql/selection.js';
import type { HttpContext } from './graphql-route.js';

/** What a caller without a key may ask (introspection itself is still subject to GRAPHQL_INTROSPECTION). */
const PUBLIC_ROOT_FIELDS = new Set(['__schema', '__type', '__typename']);

/** Refuses before any resolver an operation that needs a caller and has none, and a subscription (HTTP cannot carry it). */
export function authGate({ routerSecretSet }: { routerSecretSet: boolean }): ApolloServerPlugin<HttpContext> {
  // Who may read the SDL in production (HttpContext.sdlAllowed): the router by its secret when one is set, else any caller with a key.
  const sdlRefused = routerSecretSet
    ? 'The subgraph SDL is served to the router only: send its x-router-secret (ROUTER_SHARED_SECRET).'
    : 'The subgraph SDL is served to callers with an API key the payments API accepts: send "Authorization: Bearer <secret API key>".';
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, operation, document, request }: GraphQLRequestContext<HttpContext>) {
          if (!operation) return;
          if (operation.operation === 'subscription') {
            throw new GraphQLError('Subscriptions are served over GraphQL over WebSocket (graphql-ws) at this same path, or as Server-Sent Events (send "Accept: text/event-stream").', {
              extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
            });
          }
          // Neither refusal below can apply: skip the walk of the root fields (most operations).
          if (contextValue.authenticated && contextValue.sdlAllowed) return;
          const rootFields = selectedFieldNames(operation.selectionSet, fragmentsOf(document?.definitions ?? []), request.variables ?? {});
          if (rootFields.includes('_service') && !contextValue.sdlAllowed && !(await contextValue.proveForSdl?.())) {
            throw unauthenticated(sdlRefused);
          }
          if (contextValue.authenticated) return;
          if (rootFields.every((name) => PUBLIC_ROOT_FIELDS.has(name) || name === '_service')) return;
          throw unauthenticated('Authentication required: send "Authorization: Bearer <secret API key>".');
        },
      };
    },
  };
}
