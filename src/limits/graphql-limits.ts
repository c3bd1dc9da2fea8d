/**
 * Limits on the GraphQL document itself, all checked before any resolver
 * runs: tokens (graphql-js's parser, set in server.ts), depth, aliases and
 * directives (graphql-armor validation rules), then the operation's cost and
 * its number of mutation fields once variables are known.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { GraphQLError, type GraphQLSchema, type ValidationContext, type ValidationRule } from 'graphql';
import type { Limits } from '../config.js';
import { ErrorCode } from '../errors.js';
import { fragmentsOf, selectedFieldNames } from '../graphql/selection.js';
import { createCostEstimator, operationCost, type CostSettings } from './operation-cost.js';

/** A rule over the limit reports a validation error (graphql-armor's default would throw, which Apollo masks as internal). */
const report = { propagateOnRejection: false, onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)] };

export function documentRules(limits: Limits): ValidationRule[] {
  return [
    maxDepthRule({ n: limits.maxDepth, ignoreIntrospection: true, ...report }),
    maxAliasesRule({ n: limits.maxAliases, ...report }),
    maxDirectivesRule({ n: limits.maxDirectives, ...report }),
  ] as ValidationRule[];
}

export function operationTooCostly(message: string, extensions: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.OPERATION_TOO_COSTLY, ...extensions } });
}

/** Prices the operation and counts its mutation fields; over a limit, nothing runs. */
export function operationLimits(schema: GraphQLSchema, limits: Limits, pagination: CostSettings): ApolloServerPlugin {
  const estimator = createCostEstimator(schema, pagination);
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, operationName, request }) {
          if (!operation) return;
          const variables = request.variables ?? {};
          if (operation.operation === 'mutation') {
            const fields = selectedFieldNames(operation.selectionSet, fragmentsOf(document.definitions), variables).filter((n) => n !== '__typename');
            if (fields.length > limits.maxMutationFields) {
              throw operationTooCostly(`At most ${limits.maxMutationFields} mutation fields per operation; this one has ${fields.length}.`, {
                limit: limits.maxMutationFields,
                mutationFields: fields.length,
              });
            }
          }
          const cost = priced(() => operationCost({ schema, document, operationName: operationName ?? undefined, variables, estimator }));
          if (cost !== null && cost > limits.maxCost) {
            throw operationTooCostly(
              `This operation costs ${cost}, over the limit of ${limits.maxCost}: ask for fewer items (first), aliases or relations, or split it.`,
              { cost, limit: limits.maxCost },
            );
          }
        },
      };
    },
  };
}

/**
 * The price, or `null` when the variables do not coerce (graphql-query-complexity
 * rethrows graphql-js's uncoded coercion error, which Apollo would mask as
 * INTERNAL_SERVER_ERROR from a plugin): execution refuses them next with
 * BAD_USER_INPUT, before any resolver runs, so nothing unpriced reaches the upstream.
 */
function priced(price: () => number): number | null {
  try {
    return price();
  } catch (error) {
    if (error instanceof GraphQLError && error.extensions['code'] === undefined) return null;
    throw error;
  }
}

/** graphql-js's "Did you mean …?" hints reveal the schema to callers who may not introspect it. */
export function withoutSuggestions(message: string): string {
  return message.replace(/ ?Did you mean .+\?$/, '');
}
