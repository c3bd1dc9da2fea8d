/** Limits on the GraphQL document itself, all checked before any resolver runs (entered through document-check.ts). */
import type { ApolloServerPlugin } from '@apollo/server';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import {
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type TypeNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Limits } from '../config.js';
import { ErrorCode } from '../errors.js';
import { FairCache } from '../graphql/fair-cache.js';
import { fragmentsOf, selectedFieldNames } from '../graphql/selection.js';
import { documentBytes, UNPROVEN_OWNER } from './document-store.js';
import { createCostEstimator, operationCost, upstreamCallsOf, type CostSettings, type CountsUpstreamCalls } from './operation-cost.js';

/** A rule over the limit reports a validation error (graphql-armor's default would throw, which Apollo masks as internal). */
const report = { propagateOnRejection: false, onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)] };

export function documentRules(limits: Limits): ValidationRule[] {
  return [
    maxDepthRule({ n: limits.maxDepth, ignoreIntrospection: true, ...report }),
    maxAliasesRule({ n: limits.maxAliases, ...report }),
    maxDirectivesRule({ n: limits.maxDirectives, ...report }),
  ] as ValidationRule[];
}

/** A request error like the document limits': 400 over HTTP (Apollo would answer 500 for an error raised by a plugin). */
function operationTooCostly(message: string, extensions: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.OPERATION_TOO_COSTLY, ...extensions, http: { status: 400 } } });
}

/** The verdict with the price found: `cost` is null when the variables do not coerce (execution refuses them). */
export type OperationPrice = { refused: GraphQLError; cost: number | null } | { refused: null; cost: number | null };

/** The error to refuse an operation with once its variables are known (cost, mutation fields), or null. */
export interface OperationCheck {
  (document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, owner?: string): GraphQLError | null;
  price(document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, owner?: string): OperationPrice;
  cachedBytes(): number;
}

/** Admissions remembered, all operations together, in estimated bytes (a key, its price and the LRU's entry), least recently used out first. */
const ADMISSION_BYTES_REMEMBERED = 8 * 1024 * 1024;
const ADMISSION_ENTRY_BYTES = 160;
/** Variables longer than this as JSON are priced every time rather than remembered. */
const MAX_REMEMBERED_VARIABLES_CHARS = 1024;

export function operationCheck(schema: GraphQLSchema, limits: Limits, pagination: CostSettings, callerShare = 1): OperationCheck {
  const estimator = createCostEstimator(schema, pagination);
  // Priced once per parsed document and set of declared variables (undeclared ones cannot grow
  // the memory or tell requests apart); only computed prices are kept, a refusal is fresh each time.
  const admitted = new FairCache<string, number>({ maxBytes: ADMISSION_BYTES_REMEMBERED, callerShare });
  // Each parsed operation gets a number for the keys; a reparsed one is another operation.
  const operationIds = new WeakMap<OperationDefinitionNode, number>();
  let lastId = 0;
  const price = (document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, owner = UNPROVEN_OWNER): OperationPrice => {
    const operation = getOperationAST(document, operationName);
    if (!operation) return { refused: null, cost: null };
    const variablesPart = variablesKey(operation, variables);
    let id = operationIds.get(operation);
    if (id === undefined) operationIds.set(operation, (id = ++lastId));
    const key = variablesPart === null ? null : `${id}:${variablesPart}`;
    // get, not has: a hit counts as a use, so the operations in use stay remembered.
    const remembered = key === null ? undefined : admitted.get(key);
    if (remembered !== undefined) return { refused: null, cost: remembered };
    const verdict = checkOperation(document, operation, operationName, variables);
    if (verdict.refused === null && verdict.cost !== null && key !== null) admitted.set(key, verdict.cost, ADMISSION_ENTRY_BYTES + 2 * key.length, owner);
    return verdict;
  };
  const check = (document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, owner?: string) =>
    price(document, operationName, variables, owner).refused;
  return Object.assign(check, { price, cachedBytes: () => admitted.bytes });

  function checkOperation(
    document: DocumentNode,
    operation: OperationDefinitionNode,
    operationName: string | undefined,
    variables: Record<string, unknown>,
  ): OperationPrice {
    if (operation.operation === 'mutation') {
      const fields = selectedFieldNames(operation.selectionSet, fragmentsOf(document.definitions), variables).filter((n) => n !== '__typename');
      if (fields.length > limits.maxMutationFields) {
        const refused = operationTooCostly(`At most ${limits.maxMutationFields} mutation fields per operation; this one has ${fields.length}.`, {
          limit: limits.maxMutationFields,
          mutationFields: fields.length,
        });
        return { refused, cost: null };
      }
    }
    const cost = priced(() => operationCost({ schema, document, operationName, variables, estimator }));
    if (cost === null) return { refused: null, cost: null };
    if (cost > limits.maxCost) {
      const refused = operationTooCostly(
        `This operation costs ${cost}, over the limit of ${limits.maxCost}: ask for fewer items (first), aliases or relations, or split it.`,
        { cost, limit: limits.maxCost },
      );
      return { refused, cost };
    }
    // Mutation fields run one after another: one that would outrun the operation's upstream budget
    // would stop part way, its first writes done. Refused whole instead, before any of them.
    if (operation.operation === 'mutation' && cost > limits.maxUpstreamCalls) {
      const refused = operationTooCostly(
        `This mutation costs ${cost}, over the ${limits.maxUpstreamCalls} upstream calls one operation may make: it would stop part way, some of its writes done. Split it.`,
        { cost, limit: limits.maxUpstreamCalls },
      );
      return { refused, cost };
    }
    return { refused: null, cost };
  }
}

/**
 * Declared variables as JSON, absent ones absent (a default may differ from null); null when not worth
 * remembering. Infinity sharing null's key is safe: execution refuses it.
 */
function variablesKey(operation: OperationDefinitionNode, variables: Record<string, unknown>): string | null {
  // No prototype: a variable named `__proto__` is a key like any other, not a prototype to set.
  const declared: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const { variable, type } of operation.variableDefinitions ?? []) {
    const name = variable.name.value;
    if (!Object.hasOwn(variables, name)) continue;
    const value = variables[name];
    const scalar = idOrText(type);
    if (scalar === null || value === null) declared[name] = value;
    // An id or a text is never a size: only whether it is given can change the price (an argument's
    // @cost), so one admission serves every id. A value that would not coerce is priced (and refused) each time.
    else if (typeof value === 'string' || (scalar === 'ID' && Number.isInteger(value))) declared[name] = true;
    else return null;
  }
  let key: string;
  try {
    key = JSON.stringify(declared);
  } catch {
    // Nested past the stack (a few thousand levels): not remembered; execution refuses it as BAD_USER_INPUT.
    return null;
  }
  return key.length <= MAX_REMEMBERED_VARIABLES_CHARS ? key : null;
}

function idOrText(type: TypeNode): 'ID' | 'String' | null {
  const named = type.kind === Kind.NON_NULL_TYPE ? type.type : type;
  if (named.kind !== Kind.NAMED_TYPE) return null;
  return named.name.value === 'ID' || named.name.value === 'String' ? named.name.value : null;
}

/** What `extensions.cost` says of an answer, as Shopify's do; null turns it off (COST_EXTENSIONS=false). */
export interface CostExtensionSettings {
  /** MAX_OPERATION_COST: `maximumAvailable`. */
  maximumAvailable: number;
}

/** The HTTP side of `operationCheck`: over a limit, nothing runs; priced answers carry `extensions.cost`. */
export function operationLimits(
  check: OperationCheck,
  costExtension: CostExtensionSettings | null,
  ownerOf: (contextValue: unknown) => string = () => UNPROVEN_OWNER,
): ApolloServerPlugin<CountsUpstreamCalls> {
  return {
    async requestDidStart() {
      let requested: number | null = null;
      return {
        async didResolveOperation({ document, operation, operationName, request, contextValue }) {
          if (!operation) return;
          const { refused, cost } = check.price(document, operationName ?? undefined, request.variables ?? {}, ownerOf(contextValue));
          requested = cost;
          if (refused) throw refused;
        },
        async willSendResponse({ response, contextValue }) {
          if (!costExtension || requested === null || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          const cost = { requestedQueryCost: requested, actualQueryCost: upstreamCallsOf(contextValue), maximumAvailable: costExtension.maximumAvailable };
          result.extensions = { ...result.extensions, cost };
        },
      };
    },
  };
}

export interface AdmissionGuard {
  maxTokens: number;
  rules: readonly ValidationRule[];
  check: OperationCheck;
  refusedRootFields?: readonly string[];
  /** Documents that passed before (validatedDocuments); without it, every document is parsed and validated. */
  validated?: FairCache<string, DocumentNode>;
  owner?: string;
}

/** Every document limit for a transport that parses and validates itself (graphql-ws, graphql-sse). */
export function admitDocument(
  schema: GraphQLSchema,
  source: string,
  operationName: string | undefined,
  variables: Record<string, unknown>,
  guard: AdmissionGuard,
): { document: DocumentNode } | { errors: GraphQLError[] } {
  let document = guard.validated?.get(source);
  if (document === undefined) {
    const fresh = parsedAndValid(schema, source, guard);
    if ('errors' in fresh) return fresh;
    document = fresh;
    guard.validated?.set(source, document, documentBytes(source.length), guard.owner ?? UNPROVEN_OWNER);
  }
  const operation = getOperationAST(document, operationName);
  if (operation && guard.refusedRootFields?.length) {
    const roots = selectedFieldNames(operation.selectionSet, fragmentsOf(document.definitions), variables);
    const refusedRoot = roots.find((name) => guard.refusedRootFields!.includes(name));
    if (refusedRoot) {
      return { errors: [new GraphQLError(`\`${refusedRoot}\` is not served on this transport.`, { extensions: { code: ErrorCode.UNAUTHENTICATED } })] };
    }
  }
  const refused = guard.check(document, operationName, variables, guard.owner);
  return refused ? { errors: [refused] } : { document };
}

function parsedAndValid(schema: GraphQLSchema, source: string, guard: AdmissionGuard): DocumentNode | { errors: GraphQLError[] } {
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens: guard.maxTokens });
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : 'Syntax Error';
    return { errors: [new GraphQLError(message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })] };
  }
  const invalid = validate(schema, document, [...specifiedRules, ...guard.rules]);
  if (invalid.length > 0) {
    return { errors: invalid.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })) };
  }
  return document;
}

/**
 * `null` when the variables do not coerce (Apollo would mask the uncoded error as internal):
 * execution refuses them as BAD_USER_INPUT before any resolver, so nothing unpriced goes upstream.
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
