/** An Apollo plugin: the `Cache-Control` of each HTTP answer, and the cache tags a router may keep it under. */
import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, valueFromASTUntyped, type DocumentNode, type OperationDefinitionNode, type ValueNode } from 'graphql';
import { TAGGED_ROOT_FIELDS } from '../cache/index.js';
import { cacheTagOf, isTagged } from '../cache/router-invalidation.js';
import { finalAnswer, type DocumentCacheHint } from '../graphql/cache-hints.js';
import type { HttpContext } from './graphql-route.js';

/** Kept by no cache; `private` too, so a cache that misreads `no-store` still never shares it across keys. */
const NOT_STORED = 'private, no-store';

/**
 * `Cache-Control` as routers' response caches read it: `private` always (an answer is one key's), else from the
 * document's cache hint. Apollo's cache-control plugin is off: it hooks every field of every answer.
 */
export function cacheHeaders(hintOf: (document: DocumentNode, operationName: string | undefined) => DocumentCacheHint): ApolloServerPlugin<HttpContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, document, operation, operationName, errors, request }) {
          const cacheControl = cacheControlOf(response.body, document, operationName ?? undefined, errors?.length ?? 0);
          response.http.headers.set('cache-control', cacheControl);
          // What a router may keep is tagged, so the gateway's invalidations (cache/router-invalidation.ts) reach it.
          if (cacheControl !== NOT_STORED && operation && response.body.kind === 'single') {
            const result = response.body.singleResult;
            result.extensions = { ...result.extensions, ...cacheTagsOf(operation, request.variables ?? {}) };
          }
        },
      };
    },
  };

  function cacheControlOf(body: { kind: string; singleResult?: { data?: unknown; errors?: unknown } }, document: DocumentNode | undefined, operationName: string | undefined, errors: number): string {
    if (!document || errors > 0 || body.kind !== 'single' || body.singleResult?.errors) return NOT_STORED;
    const hint = hintOf(document, operationName);
    if (hint.maxAge <= 0 || !finalAnswer(body.singleResult?.data, hint.statusChecks, hint.holders, hint.roots)) return NOT_STORED;
    return `private, max-age=${hint.maxAge}`;
  }
}

/**
 * Apollo Router's cache tags for an answer it may keep: `apolloEntityCacheTags`, one list per
 * representation of `_entities`, and `apolloCacheTags` for root fields reading one object by id.
 */
function cacheTagsOf(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const rootTags: string[] = [];
  let entityTags: string[][] | undefined;
  const valueOf = (node: ValueNode) => valueFromASTUntyped(node, variables);
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const args = Object.fromEntries((selection.arguments ?? []).map((a) => [a.name.value, valueOf(a.value)]));
    if (selection.name.value === '_entities' && Array.isArray(args.representations)) {
      entityTags = args.representations.map((r: unknown) => {
        const { __typename: typename, id } = (typeof r === 'object' && r !== null ? r : {}) as Record<string, unknown>;
        const kind = typeof typename === 'string' ? typename.toLowerCase() : '';
        return isTagged(kind) && (typeof id === 'string' || typeof id === 'number') ? [cacheTagOf(kind, id)] : [];
      });
    }
    const kind = TAGGED_ROOT_FIELDS[selection.name.value];
    if (kind && (typeof args.id === 'string' || typeof args.id === 'number')) rootTags.push(cacheTagOf(kind, args.id));
  }
  return { ...(entityTags ? { apolloEntityCacheTags: entityTags } : {}), ...(rootTags.length > 0 ? { apolloCacheTags: rootTags } : {}) };
}
