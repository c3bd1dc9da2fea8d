/**
 * Parsed documents and APQ texts kept by their text so a repeated operation is not parsed again;
 * bounded by heap, not count, with a share per caller so one caller's documents push out its own.
 */
import type { ApolloServerOptions, ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { DocumentNode } from 'graphql';
import { FairCache, type FairCacheOptions } from '../graphql/fair-cache.js';

/** Heap a parsed document holds per character of its text (figures: docs/performance.md). */
const DOCUMENT_BYTES_PER_CHAR = 100;

/** The owner of what a caller whose key the upstream has not accepted lately stores: all such callers share one. */
export const UNPROVEN_OWNER = '(unproven)';

/** What a kept text costs: two bytes a character at most, and its entry. */
const TEXT_ENTRY_BYTES = 64;

export function documentBytes(sourceLength: number): number {
  return Math.max(1, sourceLength) * DOCUMENT_BYTES_PER_CHAR;
}

export function validatedDocuments(options: FairCacheOptions): FairCache<string, DocumentNode> {
  return new FairCache<string, DocumentNode>(options);
}

type DocumentStore = NonNullable<ApolloServerOptions<BaseContext>['documentStore']>;
type TextStore = NonNullable<Exclude<ApolloServerOptions<BaseContext>['persistedQueries'], false | undefined>['cache']>;

/** Texts being asked for at once, at most: past it the oldest is forgotten (its document, if stored, goes to UNPROVEN_OWNER). */
const MAX_ASKING = 10_000;

/** Requests whose document may be stored, by query hash: who asked, and how many of their requests are running. */
interface Asking {
  owner: string;
  requests: number;
}

export interface FairDocumentStores {
  store: DocumentStore;
  /** Apollo Server's `persistedQueries.cache`: texts registered under their hash. */
  persisted: TextStore;
  plugin: ApolloServerPlugin<BaseContext>;
  bytes(): number;
  persistedBytes(): number;
  bytesOf(owner: string): number;
}

/** Apollo gives the stores only a hash, so the plugin tells them who sent that text while the request runs. */
export function fairDocumentStore(options: FairCacheOptions, ownerOf: (contextValue: unknown) => string): FairDocumentStores {
  const documents = new FairCache<string, DocumentNode>(options);
  const texts = new FairCache<string, string>(options);
  const asking = new Map<string, Asking>();
  const ownerOfKey = (key: string) => asking.get(key.slice(key.lastIndexOf(':') + 1))?.owner ?? UNPROVEN_OWNER;
  const store: DocumentStore = {
    get: async (key) => documents.get(key),
    set: async (key, document) => {
      documents.set(key, document, documentBytes(document.loc?.source.body.length ?? 0), ownerOfKey(key));
    },
    delete: async (key) => {
      documents.delete(key);
      return true;
    },
  };
  // No TTL: a text goes when its owner's share or the whole needs the room.
  const persisted: TextStore = {
    get: async (key) => texts.get(key),
    set: async (key, text) => {
      texts.set(key, text, TEXT_ENTRY_BYTES + 2 * text.length, ownerOfKey(key));
    },
    delete: async (key) => {
      texts.delete(key);
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
        // Apollo stores a document right after it validates it, and registers a text once the operation is resolved.
        async willSendResponse() {
          done();
        },
      };
    },
  };
  return {
    store,
    persisted,
    plugin,
    bytes: () => documents.bytes,
    persistedBytes: () => texts.bytes,
    bytesOf: (owner) => documents.bytesOf(owner) + texts.bytesOf(owner),
  };
}
