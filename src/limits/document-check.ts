/**
 * The one check of a GraphQL document, whichever transport carries it: HTTP drives it through
 * Apollo Server's options, streams through `admit`, so both obey one set of limits.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type DocumentNode, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import { ErrorCode } from '../errors.js';
import type { FairCache } from '../graphql/fair-cache.js';
import type { CountsUpstreamCalls } from './operation-cost.js';
import { admitDocument, operationLimits, type CostExtensionSettings, type OperationCheck } from './graphql-limits.js';
import { capAnswer, overSize, tooLarge } from './response-size.js';
import type { TrustedDocuments } from './trusted-documents.js';

export interface DocumentLimits {
  maxTokens: number;
  rules: readonly ValidationRule[];
  check: OperationCheck;
  maxResponseBytes: number;
  trusted: TrustedDocuments | null;
}

/** What a transport that parses documents itself adds: rules Apollo adds for HTTP, fields it never serves, its store. */
export interface StreamGuard {
  rules: readonly ValidationRule[];
  refusedRootFields: readonly string[];
  /** Documents that passed before; absent, every document is parsed and validated (a key anyone could invent). */
  validated?: FairCache<string, DocumentNode> | undefined;
  owner?: string | undefined;
}

export type DocumentAdmission = { document: DocumentNode; source: string } | { errors: GraphQLError[] };

export interface DocumentCheck extends DocumentLimits {
  /** With trusted documents, the manifest's text for the id or hash named; else `query`. */
  source(body: Record<string, unknown>): string | GraphQLError;
  admit(body: Record<string, unknown>, operationName: string | undefined, variables: Record<string, unknown>, guard: StreamGuard): DocumentAdmission;
  /** The answer's size cap (response-size.ts), on the text already serialised: over it, one coded error instead. */
  capAnswer(text: string, operation: Parameters<typeof capAnswer>[2]): string;
  /** For a transport that serialises itself (graphql-ws): whether this result would be over the cap. */
  overSize(result: unknown): boolean;
  /** The error an answer over the cap is replaced by. */
  tooLarge(): GraphQLError;
  apolloOptions(
    costExtension: CostExtensionSettings | null,
    ownerOf: (contextValue: unknown) => string,
  ): { parseOptions: ParseOptions; validationRules: ValidationRule[]; plugin: ApolloServerPlugin<CountsUpstreamCalls> };
}

export function documentCheck(schema: GraphQLSchema, limits: DocumentLimits): DocumentCheck {
  const source = (body: Record<string, unknown>): string | GraphQLError => {
    const text = limits.trusted ? limits.trusted.resolve(body) : body.query;
    if (typeof text === 'string') return text;
    return limits.trusted
      ? new GraphQLError('Only trusted documents run here: send a documentId or persisted-query hash from the manifest.', { extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } })
      : new GraphQLError('The request has no query.', { extensions: { code: ErrorCode.BAD_USER_INPUT } });
  };
  return {
    ...limits,
    source,
    admit(body, operationName, variables, guard) {
      const text = source(body);
      if (text instanceof GraphQLError) return { errors: [text] };
      const admitted = admitDocument(schema, text, operationName, variables, {
        maxTokens: limits.maxTokens,
        rules: guard.rules,
        check: limits.check,
        refusedRootFields: guard.refusedRootFields,
        ...(guard.validated ? { validated: guard.validated } : {}),
        ...(guard.owner !== undefined ? { owner: guard.owner } : {}),
      });
      return 'errors' in admitted ? admitted : { document: admitted.document, source: text };
    },
    capAnswer: (text, operation) => capAnswer(text, limits.maxResponseBytes, operation),
    overSize: (result) => overSize(result, limits.maxResponseBytes),
    tooLarge: () => tooLarge(limits.maxResponseBytes),
    apolloOptions: (costExtension, ownerOf) => ({
      parseOptions: { maxTokens: limits.maxTokens },
      validationRules: [...limits.rules],
      plugin: operationLimits(limits.check, costExtension, ownerOf),
    }),
  };
}
