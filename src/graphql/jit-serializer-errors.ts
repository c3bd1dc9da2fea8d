/**
 * What our scalars' serializers throw, kept for graphql-jit's answers. graphql-jit keeps only
 * the message of a serializer's error (graphql-js keeps the error: an upstream value no scalar
 * can represent is UPSTREAM_ERROR, src/resolvers/scalars.ts), so the error is thrown on under a
 * token and found again by it when the answer's errors are rebuilt.
 *
 * A serializer is handed the value alone, not the execution it serves, so the errors of all
 * executions share one map. None is dropped while an execution that may have thrown it still
 * runs, however many an answer has; once every execution older than an error has ended, it is
 * dropped (an AsyncLocalStorage could hand each execution its own map, but on Node 20 it turns
 * on promise hooks for every promise of every operation).
 */
import { GraphQLScalarType, isScalarType, isSpecifiedScalarType, type GraphQLSchema } from 'graphql';

const TOKEN = '\u0000serializer error ';

export class SerializerErrors {
  /** Serializers of the schema's own scalars, for graphql-jit's `customSerializers`. */
  readonly byType: Record<string, (value: unknown) => unknown> = {};
  /** By token, in the order thrown (so by `thrownCount` when thrown). */
  private readonly thrown = new Map<string, { seq: number; error: Error }>();
  private thrownCount = 0;
  /** Each execution still running, with `thrownCount` when it began: oldest first, so smallest first. */
  private readonly running = new Map<object, number>();

  constructor(schema: GraphQLSchema) {
    for (const type of Object.values(schema.getTypeMap())) {
      if (isScalarType(type) && !isSpecifiedScalarType(type)) this.byType[type.name] = this.keeping(type);
    }
  }

  /** Runs one execution; `run` finds its errors by token (`errorOf`) before it returns. */
  async during<T>(run: () => Promise<T>): Promise<T> {
    const execution = {};
    this.running.set(execution, this.thrownCount);
    try {
      return await run();
    } finally {
      this.running.delete(execution);
      this.dropUnreachable();
    }
  }

  /** The error a serializer threw under this message, if it is a token. */
  errorOf(message: string): Error | undefined {
    return message.startsWith(TOKEN) ? this.thrown.get(message)?.error : undefined;
  }

  /** How many errors are kept (for tests). */
  get size(): number {
    return this.thrown.size;
  }

  private keeping(type: GraphQLScalarType): (value: unknown) => unknown {
    return (value) => {
      try {
        return type.serialize(value);
      } catch (error) {
        const seq = ++this.thrownCount;
        const token = `${TOKEN}${seq}`;
        this.thrown.set(token, { seq, error: error instanceof Error ? error : new Error(String(error)) });
        throw new Error(token);
      }
    };
  }

  /** Errors thrown before the oldest running execution began belong to none still running. */
  private dropUnreachable(): void {
    const oldest = this.running.values().next();
    const before = oldest.done ? this.thrownCount : oldest.value;
    for (const [token, { seq }] of this.thrown) {
      if (seq > before) break;
      this.thrown.delete(token);
    }
  }
}
