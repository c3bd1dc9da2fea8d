/**
 * The executor's own bookkeeping, without a server: the compiled-document cache (its bytes, each
 * caller's share, and the `false` kept for a document graphql-jit refuses) and the serializer errors
 * kept per execution.
 */
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { compiledBytes, jitExecutor } from '../../../src/graphql/jit-executor.js';
import { SerializerErrors } from '../../../src/graphql/jit-serializer-errors.js';
import { buildSchema } from '../../../src/schema.js';
import { jit } from '../../support/jit-spy.js';

vi.mock('graphql-jit', (real) => import('../../support/jit-spy.js').then((spy) => spy.spiedGraphqlJit(real)));

const schema = buildSchema();

/** What Apollo hands a gateway's executor, for a document of root `__typename` only (no resolver needs a context). */
function requestOf(text: string, operationName?: string, owner = 'caller') {
  const document = parse(text);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  return { request: { query: text, operationName, variables: {} }, source: text, document, operation, queryHash: `hash of ${text}`, context: { owner } } as never;
}

const options = (maxBytes: number, callerShare = 1) => ({
  cache: { maxBytes, callerShare },
  compiledSchema: buildSchema(),
  ownerOf: (context: unknown) => (context as { owner: string }).owner,
});

describe('the compiled-document cache', () => {
  const nth = (i: number) => `query N${String(i).padStart(3, '0')} { __typename }`;
  const each = compiledBytes(nth(0).length);

  it('keeps the documents used last within its bytes, and compiles one dropped from it again', async () => {
    const execute = jitExecutor(schema, options(10 * each));
    const compiled = jit.compiled;
    for (let i = 0; i <= 10; i++) expect(await execute(requestOf(nth(i)))).toEqual({ data: { __typename: 'Query' } });
    expect(jit.compiled).toBe(compiled + 11);
    expect(execute.cachedBytes()).toBe(10 * each);
    // The first was dropped by the last; the second is still kept.
    await execute(requestOf(nth(1)));
    expect(jit.compiled).toBe(compiled + 11);
    await execute(requestOf(nth(0)));
    expect(jit.compiled).toBe(compiled + 12);
  });

  it("holds one caller's compiled queries to its share, so its flood never drops another caller's", async () => {
    const execute = jitExecutor(schema, options(10 * each, 0.3));
    await execute(requestOf(nth(999), undefined, 'other'));
    for (let i = 0; i < 50; i++) await execute(requestOf(nth(i), undefined, 'flooder'));
    expect(execute.cachedBytes()).toBe(4 * each);
    const compiled = jit.compiled;
    await execute(requestOf(nth(999), undefined, 'other'));
    await execute(requestOf(nth(49), undefined, 'flooder'));
    expect(jit.compiled).toBe(compiled);
  });

  it('runs a document too large for one caller share on graphql-js, without compiling it', async () => {
    const text = `query Large { __typename transactions(first: 1, after: "${'x'.repeat(2_000)}") { totalCount } }`;
    const execute = jitExecutor(schema, options(compiledBytes(1_000)));
    const attempts = jit.attempts;
    // graphql-js runs it: the resolver finds no upstream in this bare context, and says so as an error with data.
    const answer = await execute(requestOf(text));
    expect(answer.errors?.length).toBeGreaterThan(0);
    expect(jit.attempts).toBe(attempts);
    expect(execute.cachedBytes()).toBe(0);
  });

  it('asks graphql-jit once about a document it refuses, and runs it on graphql-js every time', async () => {
    const execute = jitExecutor(schema, options(1024 * 1024));
    // An operation name the document lacks: graphql-jit refuses to compile it; graphql-js answers why.
    const request = () => requestOf('query A { __typename }', 'B');
    const attempts = jit.attempts;
    const runs = jit.runs;
    for (let i = 0; i < 3; i++) {
      const answer = await execute(request());
      expect(answer.errors?.[0]?.message).toBe('Unknown operation named "B".');
    }
    expect(jit.attempts).toBe(attempts + 1);
    expect(jit.runs).toBe(runs);
  });
});

describe('serializer errors kept for graphql-jit', () => {
  const errors = new SerializerErrors(schema);
  const throwing = (scalar: string, value: unknown): string => {
    try {
      errors.byType[scalar]!(value);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error(`${scalar} took ${String(value)}`);
  };

  it('keeps every error an execution throws, however many, until no execution that may own it runs', async () => {
    let endOlder!: () => void;
    const older = errors.during(() => new Promise<string>((resolve) => (endOlder = () => resolve(throwing('DateTime', 'late')))));
    const tokens = await errors.during(async () => Array.from({ length: 5_000 }, () => throwing('DateTime', 'soon')));
    // The older execution still runs and might have thrown any of them: all are kept.
    expect(errors.size).toBe(5_000);
    const found = tokens.map((token) => errors.errorOf(token));
    expect(found.every((error) => error instanceof Error && /DateTime scalar cannot represent/.test(error.message))).toBe(true);
    endOlder();
    const lateToken = await older;
    expect(errors.size).toBe(0);
    expect(errors.errorOf(lateToken)).toBeUndefined();
    expect(errors.errorOf('an ordinary message')).toBeUndefined();
  });
});
