/**
 * The one check of a GraphQL document, whichever transport carries it:
 * trusted documents first (the text a request may run), then tokens while
 * parsing, graphql-js's rules with depth, aliases and directives
 * (graphql-limits.ts), then cost and mutation fields once variables are known.
 * HTTP enters it through Apollo Server (`apolloOptions`: Apollo parses,
 * validates and keeps documents in its own store, with these very limits);
 * the streaming transports through `admit` (admission.openStream), which
 * parses and validates itself. Same rules, same operation check, same
 * trusted manifest: one set of limits, two ways of driving them.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type DocumentNode, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import { ErrorCode } from '../errors.js';
import type { FairCache } from '../graphql/fair-cache.js';
import type { UpstreamGate } from '../access/upstream-budget.js';
import { admitDocument, operationLimits, type CostExtensionSettings, type OperationCheck } from './graphql-limits.js';
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
  /** Who a document remembered, and a price, is charged to. */
  owner?: string | undefined;
}

export type DocumentAdmission = { document: DocumentNode; source: string } | { errors: GraphQLError[] };

export interface DocumentCheck extends DocumentLimits {
  /**
   * The text a request runs: with trusted documents, the manifest's for the id or hash it names (or its own
   * text when that is listed), else its `query`. A coded error when there is none.
   */
  source(body: Record<string, unknown>): string | GraphQLError;
  /** Every limit, for a transport that parses and validates itself: the parsed document, or the errors to refuse it with. */
  admit(body: Record<string, unknown>, operationName: string | undefined, variables: Record<string, unknown>, guard: StreamGuard): DocumentAdmission;
  /** The same limits as Apollo Server's options: its parser's tokens, the validation rules, the operation check as a plugin. */
  apolloOptions(
    costExtension: CostExtensionSettings | null,
    ownerOf: (contextValue: unknown) => string,
  ): { parseOptions: ParseOptions; validationRules: ValidationRule[]; plugin: ApolloServerPlugin<{ upstreamGate?: UpstreamGate | undefined }> };
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
    apolloOptions: (costExtension, ownerOf) => ({
      parseOptions: { maxTokens: limits.maxTokens },
      validationRules: [...limits.rules],
      plugin: operationLimits(limits.check, costExtension, ownerOf),
    }),
  };
}
