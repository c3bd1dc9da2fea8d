/**
 * An operation's price from the schema's `@cost` and `@listSize` (the IBM cost spec the routers read too),
 * so routers and gateway price from one set of numbers; the rules are in docs/security.md ("Cost").
 */
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isInputObjectType,
  isListType,
  isObjectType,
  valueFromASTUntyped,
  type ConstDirectiveNode,
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';

/** What `extensions.cost` reads of an operation's context: the calls its upstream gate admitted (access/upstream-budget.ts). */
export interface CountsUpstreamCalls {
  upstreamGate?: { readonly calls: number } | undefined;
}

/** `extensions.cost`'s actualQueryCost. */
export function upstreamCallsOf(context: CountsUpstreamCalls | undefined): number {
  return context?.upstreamGate?.calls ?? 0;
}

/** How many items a list with neither slicing argument nor `assumedSize` is priced at (routers: `list_size` / `listSize`). */
export const LIST_ASSUMED_ITEMS = 10;

export interface CostSettings {
  /** Items a connection returns when no slicing argument is given. */
  defaultFirst: number;
  /** The most a slicing argument may ask for (more is refused when the field runs). */
  maxFirst: number;
}

interface ListSize {
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
}

interface FieldPrice {
  weight: number;
  isList: boolean;
  listSize: ListSize | undefined;
  argumentWeights: [GraphQLArgument, number][];
  /** True for `edges` and `nodes` of a connection: the connection multiplies them, not they themselves. */
  sizedByParent: boolean;
}

function directive(directives: readonly ConstDirectiveNode[] | undefined, name: string): Record<string, unknown> | undefined {
  const found = directives?.find((d) => d.name.value === name);
  if (!found) return undefined;
  return Object.fromEntries((found.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value)]));
}

function typeWeight(type: GraphQLNamedType): number {
  const cost = [type.astNode, ...(type.extensionASTNodes ?? [])].map((n) => directive(n?.directives, 'cost')).find(Boolean);
  if (cost && typeof cost.weight === 'number') return cost.weight;
  return isCompositeType(type) ? 1 : 0;
}

export function createCostEstimator(schema: GraphQLSchema, settings: CostSettings): ComplexityEstimator {
  const prices = new WeakMap<GraphQLField<unknown, unknown>, FieldPrice>();
  const sizedFieldsOf = sizedFieldsByType(schema);

  const priceOf = (typeName: string, field: GraphQLField<unknown, unknown>): FieldPrice => {
    let price = prices.get(field);
    if (price) return price;
    const cost = directive(field.astNode?.directives, 'cost');
    price = {
      weight: cost && typeof cost.weight === 'number' ? cost.weight : typeWeight(getNamedType(field.type)),
      isList: isListType(getNullableType(field.type)),
      listSize: directive(field.astNode?.directives, 'listSize') as ListSize | undefined,
      argumentWeights: field.args.map((a) => {
        const weight = directive(a.astNode?.directives, 'cost')?.weight;
        return [a, typeof weight === 'number' ? weight : 0] as [GraphQLArgument, number];
      }),
      sizedByParent: sizedFieldsOf.get(typeName)?.has(field.name) ?? false,
    };
    prices.set(field, price);
    return price;
  };

  const sizeOf = (listSize: ListSize | undefined, args: Record<string, unknown>): number => {
    const slicing = listSize?.slicingArguments ?? [];
    const given = slicing.map((name) => args[name]).filter((v): v is number => typeof v === 'number');
    if (given.length > 0) return Math.min(Math.max(Math.max(...given), 0), settings.maxFirst);
    if (slicing.length > 0) return settings.defaultFirst;
    return listSize?.assumedSize ?? LIST_ASSUMED_ITEMS;
  };

  return ({ type, field, args, childComplexity }) => {
    // Introspection reads the schema, never the upstream: free, as the routers count it.
    if (type.name.startsWith('__') || field.name.startsWith('__')) return 0;
    if (field.name === '_entities') {
      const representations = Array.isArray(args.representations) ? args.representations.length : 0;
      return representations * (typeWeight(getNamedType(field.type)) + childComplexity);
    }
    const price = priceOf(type.name, field as GraphQLField<unknown, unknown>);
    let argumentsCost = 0;
    for (const [argument, weight] of price.argumentWeights) {
      const value = args[argument.name];
      if (value != null) argumentsCost += weight + inputCost(argument.type, value);
    }
    const perItem = price.weight + childComplexity;
    // One item of a sized field: its connection multiplies it by the page size.
    if (price.sizedByParent) return perItem + argumentsCost;
    if (price.listSize?.sizedFields?.length) return price.weight + sizeOf(price.listSize, args) * childComplexity + argumentsCost;
    return (price.isList ? sizeOf(price.listSize, args) * perItem : perItem) + argumentsCost;
  };
}

function inputCost(type: GraphQLInputType, value: unknown): number {
  const nullable = getNullableType(type);
  if (value == null) return 0;
  if (isListType(nullable)) return Array.isArray(value) ? value.reduce((sum: number, item) => sum + inputCost(nullable.ofType, item), 0) : inputCost(nullable.ofType, value);
  if (!isInputObjectType(nullable) || typeof value !== 'object') return 0;
  let cost = 0;
  for (const field of Object.values(nullable.getFields())) {
    const given = (value as Record<string, unknown>)[field.name];
    if (given == null) continue;
    const weight = directive(field.astNode?.directives, 'cost')?.weight;
    cost += (typeof weight === 'number' ? weight : 0) + inputCost(field.type, given);
  }
  return cost;
}

/**
 * The fields each type's connections size (`edges`, `nodes`), from every `@listSize(sizedFields:)`.
 * A connection multiplies its whole selection by its size, so any other field of the type
 * (`pageInfo`, `totalCount`) must cost nothing: a schema where one could is refused here.
 */
function sizedFieldsByType(schema: GraphQLSchema): Map<string, Set<string>> {
  const sized = new Map<string, Set<string>>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const names = (directive(field.astNode?.directives, 'listSize') as ListSize | undefined)?.sizedFields;
      if (!names?.length) continue;
      const target = getNamedType(field.type);
      const set = sized.get(target.name) ?? new Set<string>();
      names.forEach((n) => set.add(n));
      sized.set(target.name, set);
    }
  }
  for (const [typeName, names] of sized) {
    const type = schema.getType(typeName);
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (names.has(field.name)) continue;
      const named = getNamedType(field.type);
      const free = typeWeight(named) === 0 && (!isObjectType(named) || Object.values(named.getFields()).every((f) => !isCompositeType(getNamedType(f.type))));
      if (!free) throw new Error(`${typeName}.${field.name} is not a sized field, so it must cost nothing: its connection multiplies its whole selection.`);
    }
  }
  return sized;
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
