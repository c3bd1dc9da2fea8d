/**
 * What an operation will cost the upstream, priced from the schema before
 * any resolver runs (graphql-query-complexity walks the document, @skip and
 * @include and fragments included; this file only says what each field costs):
 * - a field that reads an entity (a root `transaction(id)`, a relation such as
 *   `payout.customer`) costs one upstream call plus what is selected under it;
 * - a connection costs one call plus `first` (or the default page size) times
 *   what one node costs, at least 1 per node (each node is data to build and send);
 * - `_entities` costs its number of representations times one node;
 * - any other list of entities (`currencies`, `webhooks`) is priced as
 *   LIST_ASSUMED_ITEMS items, since the upstream gives it whole;
 * - a mutation or subscription root field costs one plus its selection, and
 *   one more per item of a list argument naming objects it reads first
 *   (READ_FIRST_ARGUMENTS: `startPayouts` reads each payout it is given);
 * - a field listed in UPSTREAM_READ_FIELDS (not an entity, but read with an
 *   upstream call of its own per parent) costs one plus its selection;
 * - scalars and embedded objects cost nothing of their own.
 * Aliases multiply naturally: each alias is its own field in the document.
 */
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import {
  getNamedType,
  getNullableType,
  isListType,
  isUnionType,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';

/** Fields that are not entities yet cost one upstream call per parent (their descriptions say which). */
const UPSTREAM_READ_FIELDS = new Set(['Transaction.statusHistory', 'Payout.statusHistory']);

/** Mutation arguments listing objects the mutation reads one by one before it writes. */
const READ_FIRST_ARGUMENTS: Record<string, string> = { 'Mutation.startPayouts': 'payouts' };

/** How many items a list without `first` is priced at. */
const LIST_ASSUMED_ITEMS = 10;

export interface CostSettings {
  defaultFirst: number;
  maxFirst: number;
}

export function createCostEstimator(schema: GraphQLSchema, settings: CostSettings): ComplexityEstimator {
  const entityUnion = schema.getType('_Entity');
  const entities = new Set(isUnionType(entityUnion) ? entityUnion.getTypes().map((t) => t.name) : []);
  const rootNames = new Set([schema.getMutationType()?.name, schema.getSubscriptionType()?.name].filter(Boolean));

  return ({ type, field, args, childComplexity }) => {
    const named = getNamedType(field.type);
    const perItem = Math.max(1, childComplexity);
    if (field.name === '_entities') {
      const representations = Array.isArray(args.representations) ? args.representations.length : 0;
      return representations * perItem;
    }
    // Inside a connection the list is priced once, at the connection, by `first`.
    if (type.name.endsWith('Connection') || type.name.endsWith('Edge')) return childComplexity;
    if (named.name.endsWith('Connection')) {
      const requested = typeof args.first === 'number' ? args.first : settings.defaultFirst;
      return 1 + Math.min(Math.max(requested, 0), settings.maxFirst) * perItem;
    }
    if (rootNames.has(type.name)) {
      const argument = READ_FIRST_ARGUMENTS[`${type.name}.${field.name}`];
      const listed = argument === undefined ? undefined : args[argument];
      return 1 + (Array.isArray(listed) ? listed.length : 0) + childComplexity;
    }
    const isList = isListType(getNullableType(field.type));
    if (UPSTREAM_READ_FIELDS.has(`${type.name}.${field.name}`)) return 1 + (isList ? LIST_ASSUMED_ITEMS * childComplexity : childComplexity);
    if (entities.has(named.name)) return 1 + (isList ? LIST_ASSUMED_ITEMS * perItem : childComplexity);
    return isList ? LIST_ASSUMED_ITEMS * childComplexity : childComplexity;
  };
}

export function operationCost(options: {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | undefined;
  variables: Record<string, unknown>;
  estimator: ComplexityEstimator;
}): number {
  return getComplexity({
    schema: options.schema,
    query: options.document,
    variables: options.variables,
    estimators: [options.estimator],
    ...(options.operationName ? { operationName: options.operationName } : {}),
  });
}
