/**
 * Queries run by graphql-jit, compiled once per document: graphql-js walks the
 * schema anew for every field of every answer, a compiled query does not.
 * Handed to Apollo Server as the executor of a gateway holding our own schema,
 * so everything around execution (plugins' hooks, executionDidStart, error
 * formatting, the 400 of a bad variable) stays Apollo's. Anything not plainly
 * a query of our own fields runs on graphql-js as before: mutations,
 * subscriptions, the federation fields (`_entities`, `_service`),
 * introspection, root fragments, operations whose fields a plugin wants
 * to see resolve (the federated trace a router asks for), documents too large
 * for a caller's share of the compiled queries, and documents naming a
 * variable, alias or fragment `__proto__`, `constructor` and the like.
 *
 * graphql-jit compiles against a schema of its own, a second build of ours: the
 * first traced request makes Apollo wrap every field's resolver of the schema it
 * holds, in place and for good, and every document compiled after would call
 * that wrapper and build a resolve info for each field.
 */
import { execute, GraphQLError, Kind, visit, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import { FairCache, type FairCacheOptions } from './fair-cache.js';
import { SerializerErrors } from './jit-serializer-errors.js';

type Gateway = ApolloServerOptionsWithGateway<BaseContext>['gateway'];
type Executor = NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>;
type ExecutorContext = Parameters<Executor>[0];

export interface JitOptions {
  /** The compiled queries kept, in estimated bytes, and one caller's share of them (`compiledBytes`). */
  cache: FairCacheOptions;
  /** What graphql-jit compiles against: the same schema built apart from Apollo's, whose resolvers Apollo may wrap. */
  compiledSchema: GraphQLSchema;
  /** Who a compiled query is charged to, from the operation's context. */
  ownerOf: (contextValue: unknown) => string;
}

/**
 * Heap a compiled query holds, estimated from its document's text: a fixed part, and a part per
 * character that covers field-dense documents (a string literal costs far less; docs/performance.md).
 */
const COMPILED_BASE_BYTES = 8 * 1024;
const COMPILED_BYTES_PER_CHAR = 150;

export function compiledBytes(sourceLength: number): number {
  return COMPILED_BASE_BYTES + COMPILED_BYTES_PER_CHAR * sourceLength;
}

/** The header a router sends to ask for a federated trace, which needs every field's resolution seen. */
const TRACE_HEADER = 'apollo-federation-include-trace';

/** A gateway in name only: our schema, never updated, run by `jitExecutor`; with the bytes its compiled queries hold. */
export function jitGateway(schema: GraphQLSchema, options: JitOptions): Gateway & { cachedBytes(): number } {
  const executor = jitExecutor(schema, options);
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => {};
    },
    load: async () => ({ executor }),
    stop: async () => {},
    cachedBytes: () => executor.cachedBytes(),
  };
}

/** graphql-jit over `compiledSchema`; graphql-js, when it runs, over Apollo's `schema` (which a trace needs). */
export function jitExecutor(schema: GraphQLSchema, { cache, compiledSchema, ownerOf }: JitOptions): Executor & { cachedBytes(): number } {
  // false: graphql-jit refused the document, or it names inherited properties; graphql-js runs it every time without asking again.
  const compiled = new FairCache<string, CompiledQuery | false>(cache);
  const serializers = new SerializerErrors(compiledSchema);
  const compiledFor = (context: ExecutorContext): CompiledQuery | false => {
    const operationName = context.request.operationName ?? undefined;
    // The text (Apollo's hash of it) and the operation chosen in it: one compiled query each.
    const key = `${context.queryHash}:${operationName ?? ''}`;
    let query = compiled.get(key);
    if (query === undefined) {
      const bytes = compiledBytes(context.source?.length ?? context.document!.loc?.end ?? 0);
      // Too large for any caller's share: compiled, it would be dropped at once, so never compiled at all.
      if (bytes > compiled.perCaller) return false;
      const result = namesInherited(context.document!) ? null : compileQuery(compiledSchema, context.document!, operationName, { customSerializers: serializers.byType });
      query = result && isCompiledQuery(result) ? result : false;
      compiled.set(key, query, query ? bytes : COMPILED_BASE_BYTES, ownerOf(context.context));
    }
    return query;
  };
  const byGraphqlJs = (context: ExecutorContext) =>
    execute({
      schema,
      document: context.document!,
      contextValue: context.context,
      variableValues: context.request.variables,
      operationName: context.request.operationName,
    }) as ExecutionResult | Promise<ExecutionResult>;

  const run: Executor = async (context) => {
    if (!jitMayRun(context)) return byGraphqlJs(context);
    const query = compiledFor(context);
    if (!query) return byGraphqlJs(context);
    const result = await serializers.during(async () => {
      const answer = await query.query(undefined, context.context, context.request.variables ?? {});
      return answer.errors && answer.data !== undefined ? { ...answer, errors: answer.errors.map((error) => asGraphqlJsError(error, serializers)) } : answer;
    });
    // No data: the variables were refused before anything ran. graphql-js says why, in its own words
    // (Apollo reads them to answer 400 BAD_USER_INPUT).
    return result.data === undefined ? byGraphqlJs(context) : result;
  };
  return Object.assign(run, { cachedBytes: () => compiled.bytes });
}

/**
 * graphql-jit's errors only look like graphql-js's: no `extensions` object when the
 * thrown error had none, which Apollo's error formatting reads (and, failing, masks the
 * error, path and all). The same error rebuilt by graphql-js, with jit's locations.
 */
function asGraphqlJsError(error: GraphQLError, serializers: SerializerErrors): GraphQLError {
  const fromSerializer = error.originalError ? undefined : serializers.errorOf(error.message);
  const original = fromSerializer ?? error.originalError ?? undefined;
  const rebuilt = new GraphQLError(original?.message ?? error.message, {
    path: error.path,
    originalError: original,
    ...(error.extensions ? { extensions: error.extensions } : {}),
  });
  (rebuilt as { locations: GraphQLError['locations'] }).locations = error.locations;
  return rebuilt;
}

function jitMayRun(context: ExecutorContext): boolean {
  const operation = context.operation;
  if (!operation || operation.operation !== 'query' || !context.document || !context.queryHash) return false;
  if (context.request.http?.headers.get(TRACE_HEADER)) return false;
  return ownFieldsOnly(operation);
}

/**
 * Whether the document names a variable, an alias or a fragment as a property every object inherits
 * (`__proto__`, `constructor`, `toString`...). graphql-jit reads and writes such names with plain
 * property access: `$__proto__` given is lost, `$constructor` absent reads a function, an alias
 * `__proto__` in a list's items is dropped. graphql-js keeps them as own keys; it runs such documents.
 */
function namesInherited(document: DocumentNode): boolean {
  let found = false;
  const inherited = (name: string | undefined) => {
    if (name !== undefined && name in Object.prototype) found = true;
  };
  visit(document, {
    VariableDefinition: (node) => inherited(node.variable.name.value),
    Field: (node) => inherited(node.alias?.value),
    FragmentDefinition: (node) => inherited(node.name.value),
    FragmentSpread: (node) => inherited(node.name.value),
  });
  return found;
}

/** Only plain fields at the root, none of the federation's or introspection's (names starting with `_`, but __typename). */
function ownFieldsOnly(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.every(
    (selection) => selection.kind === Kind.FIELD && (selection.name.value === '__typename' || !selection.name.value.startsWith('_')),
  );
}
