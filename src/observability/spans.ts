/**
 * Lazy spans per root resolver and DataLoader batch: a scope becomes a span, backdated, only when an upstream call
 * starts inside it, so no empty span per field (docs/operations.md, Traces). With no tracer nothing is wrapped.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { endSpan, SpanKind, type Span, type TraceContext } from './tracing.js';

class LazySpan {
  private readonly started = Date.now();
  private span: Span | null = null;
  private context: TraceContext | null = null;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    /** An upstream call of another operation never lands in this span. */
    readonly owner: unknown,
    private readonly parent: TraceContext,
    private readonly name: string,
    private readonly attributes: Attributes,
  ) {}

  contextForCall(): TraceContext {
    // A call that starts after the scope ended (left running by a failed resolver) never gets a span nothing would end.
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

export function scopedCallContext(owner: unknown): TraceContext | undefined {
  const scope = scopes.getStore();
  return scope && scope.owner === owner ? scope.contextForCall() : undefined;
}

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

/** A batch serves every resolver that loaded into it, so it is a child of the operation, not of the first resolver. */
export function batchScope<T>(tracer: Tracer, operation: { readonly traceContext: TraceContext }, loader: string, keys: number, run: () => Promise<T>): Promise<T> {
  const attributes = { 'gateway.loader': loader, 'gateway.loader.keys': keys };
  return withinScope(new LazySpan(tracer, operation, operation.traceContext, `DataLoader ${loader}`, attributes), run);
}

export interface TracedContext {
  telemetry: { readonly traceContext: TraceContext };
}

/** Only the root fields call the upstream themselves: wrapping them alone keeps it to a scope or two per operation. */
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
