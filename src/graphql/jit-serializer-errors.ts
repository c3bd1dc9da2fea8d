/**
 * graphql-jit keeps only the message of a serializer's error, so our scalars' errors are thrown on under a token and
 * found again by it. One map for all executions (not an AsyncLocalStorage, whose promise hooks would cost every
 * operation); an error goes once no execution that may have thrown it still runs.
 */
import { GraphQLScalarType, isScalarType, isSpecifiedScalarType, type GraphQLSchema } from 'graphql';

const TOKEN = '\u0000serializer error ';

export class SerializerErrors {
  readonly byType: Record<string, (value: unknown) => unknown> = {};
  /** In the order thrown. */
  private readonly thrown = new Map<string, { seq: number; error: Error }>();
  private thrownCount = 0;
  /** Oldest first, each with `thrownCount` when it began. */
  private readonly running = new Map<object, number>();

  constructor(schema: GraphQLSchema) {
    for (const type of Object.values(schema.getTypeMap())) {
      if (isScalarType(type) && !isSpecifiedScalarType(type)) this.byType[type.name] = this.keeping(type);
    }
  }

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

  errorOf(message: string): Error | undefined {
    return message.startsWith(TOKEN) ? this.thrown.get(message)?.error : undefined;
  }

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

  private dropUnreachable(): void {
    const oldest = this.running.values().next();
    const before = oldest.done ? this.thrownCount : oldest.value;
    for (const [token, { seq }] of this.thrown) {
      if (seq > before) break;
      this.thrown.delete(token);
    }
  }
}
