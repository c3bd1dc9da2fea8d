/**
 * Spans between an operation and its upstream calls: one per root resolver
 * that calls the upstream itself, one per DataLoader batch that does. Most
 * root resolvers call nothing themselves (`transaction(id)` asks a loader),
 * and a batch answered from the entity cache calls nothing either, so these
 * spans are lazy: a scope is opened around each root resolver and each batch,
 * and it becomes a span only when an upstream call starts inside it,
 * backdated to when the scope opened. A trace then shows which field or batch cost which
 * calls, with no empty span per field.
 *
 * Only when traces are on: with no tracer, resolvers are not wrapped and
 * batches run as they are, so the scopes cost nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { endSpan, SpanKind, type Span, type TraceContext } from './tracing.js';

/** A span that exists only once something under it calls the upstream. */
class LazySpan {
  private readonly started = Date.now();
  private span: Span | null = null;
  private context: TraceContext | null = null;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    /** Whose calls these are: an upstream call of another operation never lands in this span. */
    readonly owner: unknown,
    private readonly parent: TraceContext,
    private readonly name: string,
    private readonly attributes: Attributes,
  ) {}

  /** The context an upstream call under this scope is parented by: the span, made now if needed. */
  contextForCall(): TraceContext {
    // A call that starts after the scope ended (work a failed resolver left running, such as a
    // retry beside a call that failed a Promise.all) goes under the span if it was made, else
    // under the parent: never under a span opened now that nothing would end.
    if (this.ended) return this.context ?? this.parent;
    if (!this.context) {
      this.span = this.tracer.startSpan(this.name, { kind: SpanKind.INTERNAL, attributes: this.attributes, startTime: this.started }, this.parent);
      this.context = trace.setSpan(this.parent, this.span);
    }
    return this.context;
  }

  end(failed: boolean): void {
    this.ended = true;
    endSpan(this.span, failed);
  }
}

const scopes = new AsyncLocalStorage<LazySpan>();

/** The context an upstream call of `owner` (an operation) made here should be parented by, if a scope is open. */
export function scopedCallContext(owner: unknown): TraceContext | undefined {
  const scope = scopes.getStore();
  return scope && scope.owner === owner ? scope.contextForCall() : undefined;
}

/** Runs `fn` inside `scope`, and ends the scope when what `fn` returns settles. */
function withinScope<T>(scope: LazySpan, fn: () => T): T {
  return scopes.run(scope, () => {
    let result: T;
    try {
      result = fn();
    } catch (error) {
      scope.end(true);
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => (scope.end(false), value),
        (error: unknown) => {
          scope.end(true);
          throw error;
        },
      ) as T;
    }
    scope.end(false);
    return result;
  });
}

/**
 * A DataLoader batch of `loader` over `keys` keys, as a scope of its own under
 * the operation. A batch serves every resolver that loaded into it, so it is
 * a child of the operation, not of the resolver whose load came first.
 */
export function batchScope<T>(tracer: Tracer, operation: { readonly traceContext: TraceContext }, loader: string, keys: number, run: () => Promise<T>): Promise<T> {
  const attributes = { 'gateway.loader': loader, 'gateway.loader.keys': keys };
  return withinScope(new LazySpan(tracer, operation, operation.traceContext, `DataLoader ${loader}`, attributes), run);
}

/** What a resolver's context must carry for its scope: the operation and its span's context. */
export interface TracedContext {
  telemetry: { readonly traceContext: TraceContext };
}

/**
 * Wraps the resolvers of the query and mutation root fields in a scope named
 * after the field (`Query.transactions`). Those are the resolvers that call
 * the upstream themselves (lists, searches, writes); every other field reads
 * its parent or asks a loader, whose batch has its scope. Wrapping only the
 * roots keeps the cost per operation to a scope or two, not one per field of
 * a 50-item page. Mutates the schema's field definitions in place, once, at
 * startup.
 */
export function traceResolvers(schema: GraphQLSchema, tracer: Tracer): void {
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    for (const field of Object.values(type?.getFields() ?? {})) {
      if (!field.resolve || field.resolve === defaultFieldResolver) continue;
      field.resolve = scoped(field.resolve, tracer, `${type!.name}.${field.name}`);
    }
  }
}

function scoped(resolve: GraphQLFieldResolver<unknown, unknown>, tracer: Tracer, coordinate: string): GraphQLFieldResolver<unknown, unknown> {
  const attributes = { 'graphql.field.coordinate': coordinate };
  return (source, args, context, info) => {
    const telemetry = (context as Partial<TracedContext> | undefined)?.telemetry;
    if (!telemetry) return resolve(source, args, context, info);
    const scope = new LazySpan(tracer, telemetry, telemetry.traceContext, `resolve ${coordinate}`, attributes);
    return withinScope(scope, () => resolve(source, args, context, info));
  };
}
