/**
 * Queries run by graphql-jit, compiled once per document, as the executor of an Apollo gateway so everything around
 * execution stays Apollo's. What still runs on graphql-js, and why graphql-jit compiles against a second schema
 * build: docs/performance.md, Queries compiled once.
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
  cache: FairCacheOptions;
  /** A second build of the schema: Apollo may wrap the resolvers of its own in place. */
  compiledSchema: GraphQLSchema;
  ownerOf: (contextValue: unknown) => string;
}

/** Estimated from the document's text: a per-character part covers field-dense documents (docs/performance.md). */
const COMPILED_BASE_BYTES = 8 * 1024;
const COMPILED_BYTES_PER_CHAR = 150;

export function compiledBytes(sourceLength: number): number {
  return COMPILED_BASE_BYTES + COMPILED_BYTES_PER_CHAR * sourceLength;
}

/** A federated trace needs every field's resolution seen. */
const TRACE_HEADER = 'apollo-federation-include-trace';

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

/** graphql-js runs over Apollo's `schema`, which a trace needs. */
export function jitExecutor(schema: GraphQLSchema, { cache, compiledSchema, ownerOf }: JitOptions): Executor & { cachedBytes(): number } {
  // false: graphql-jit refused the document, or it names inherited properties; graphql-js runs it without asking again.
  const compiled = new FairCache<string, CompiledQuery | false>(cache);
  const serializers = new SerializerErrors(compiledSchema);
  const compiledFor = (context: ExecutorContext): CompiledQuery | false => {
    const operationName = context.request.operationName ?? undefined;
    const key = `${context.queryHash}:${operationName ?? ''}`;
    let query = compiled.get(key);
    if (query === undefined) {
      const bytes = compiledBytes(context.source?.length ?? context.document!.loc?.end ?? 0);
      // Compiled, it would be dropped at once.
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
    // No data: the variables were refused before anything ran; graphql-js words the error Apollo answers 400 with.
    return result.data === undefined ? byGraphqlJs(context) : result;
  };
  return Object.assign(run, { cachedBytes: () => compiled.bytes });
}

/** graphql-jit's errors lack the `extensions` object Apollo's formatter reads (else it masks them): rebuilt by graphql-js. */
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

/** graphql-jit reads and writes names such as `__proto__` or `constructor` as plain properties; graphql-js runs them. */
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

/** Plain fields at the root only: none of the federation's or introspection's (`_`-prefixed, but __typename). */
function ownFieldsOnly(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.every(
    (selection) => selection.kind === Kind.FIELD && (selection.name.value === '__typename' || !selection.name.value.startsWith('_')),
  );
}
