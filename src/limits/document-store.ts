/**
 * Where parsed and validated documents are kept, by their text, so that a
 * repeated operation is neither parsed nor validated again (and reaches the
 * cost check with the same document, whose price is remembered): Apollo
 * Server's store for HTTP, and one for WebSocket and SSE (`admitDocument`).
 * Both are bounded by the heap a parsed document holds, not by a count, and
 * each caller's documents hold at most a share of them (FairCache): distinct
 * documents of one caller push out that caller's own.
 */
import type { ApolloServerOptions, ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { DocumentNode } from 'graphql';
import { FairCache, type FairCacheOptions } from '../graphql/fair-cache.js';

/**
 * Heap a parsed document holds per character of its text, tokens and nodes with their locations:
 * measured at 94 for a short subscription document and 57 for one of 180 fragments.
 */
const DOCUMENT_BYTES_PER_CHAR = 100;

/** The owner of what a caller whose key the upstream has not accepted lately stores: all such callers share one. */
export const UNPROVEN_OWNER = '(unproven)';

export function documentBytes(sourceLength: number): number {
  return Math.max(1, sourceLength) * DOCUMENT_BYTES_PER_CHAR;
}

/** Documents that parsed and validated, by their text, for `admitDocument` (WebSocket and SSE share it). */
export function validatedDocuments(options: FairCacheOptions): FairCache<string, DocumentNode> {
  return new FairCache<string, DocumentNode>(options);
}

type DocumentStore = NonNullable<ApolloServerOptions<BaseContext>['documentStore']>;

/** Texts being asked for at once, at most: past it the oldest is forgotten (its document, if stored, goes to UNPROVEN_OWNER). */
const MAX_ASKING = 10_000;

/** Requests whose document may be stored, by query hash: who asked, and how many of their requests are running. */
interface Asking {
  owner: string;
  requests: number;
}

/**
 * Apollo Server's document store, fair between callers. Apollo's store is told a key only (the
 * schema's hash and the query's); the plugin tells it who sent the text with that hash while the
 * request runs. A document stored with no request known (none should be) is charged to one owner.
 */
export function fairDocumentStore(
  options: FairCacheOptions,
  ownerOf: (contextValue: unknown) => string,
): { store: DocumentStore; plugin: ApolloServerPlugin<BaseContext>; bytes(): number; bytesOf(owner: string): number } {
  const documents = new FairCache<string, DocumentNode>(options);
  const asking = new Map<string, Asking>();
  const store: DocumentStore = {
    get: async (key) => documents.get(key),
    set: async (key, document) => {
      const hash = key.slice(key.lastIndexOf(':') + 1);
      documents.set(key, document, documentBytes(document.loc?.source.body.length ?? 0), asking.get(hash)?.owner ?? UNPROVEN_OWNER);
    },
    delete: async (key) => {
      documents.delete(key);
      return true;
    },
  };
  const plugin: ApolloServerPlugin<BaseContext> = {
    async requestDidStart({ contextValue }) {
      let hash: string | null = null;
      const done = () => {
        const entry = hash === null ? undefined : asking.get(hash);
        if (entry && --entry.requests === 0) asking.delete(hash!);
        hash = null;
      };
      return {
        async didResolveSource({ queryHash }) {
          hash = queryHash;
          const entry = asking.get(queryHash);
          // Two callers sending the same text at once: the document is theirs alike, charged to the first.
          if (entry) entry.requests += 1;
          else {
            // Every request ends in willSendResponse; a cap all the same, should one not.
            if (asking.size >= MAX_ASKING) asking.delete(asking.keys().next().value!);
            asking.set(queryHash, { owner: ownerOf(contextValue), requests: 1 });
          }
        },
        // Apollo stores a document right after it validates it, before it runs the operation.
        async didResolveOperation() {
          done();
        },
        async willSendResponse() {
          done();
        },
      };
    },
  };
  return { store, plugin, bytes: () => documents.bytes, bytesOf: (owner) => documents.bytesOf(owner) };
}
