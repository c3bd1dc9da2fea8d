/**
 * graphql-jit with counters, so a test can tell which executor ran a query (a comparison cannot
 * pass by both sides running graphql-js). A test file installs it with
 *   vi.mock('graphql-jit', (real) => import('../support/jit-spy.js').then((spy) => spy.spiedGraphqlJit(real)));
 * and reads `jit` from this module.
 */
import type { GraphQLSchema } from 'graphql';
import type * as GraphqlJit from 'graphql-jit';

export const jit = {
  /** Documents handed to graphql-jit, refused ones included. */
  attempts: 0,
  /** Documents graphql-jit compiled (refused ones not counted). */
  compiled: 0,
  /** Compiled queries run. */
  runs: 0,
  /** The schema the last document was compiled against. */
  schema: null as GraphQLSchema | null,
};

export async function spiedGraphqlJit(importOriginal: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const real = (await importOriginal()) as typeof GraphqlJit;
  return {
    ...real,
    compileQuery: (...args: Parameters<typeof real.compileQuery>) => {
      jit.attempts += 1;
      const result = real.compileQuery(...args);
      if ('query' in result) {
        jit.compiled += 1;
        jit.schema = args[0];
        const run = result.query.bind(result);
        result.query = (root, context, variables) => {
          jit.runs += 1;
          return run(root, context, variables);
        };
      }
      return result;
    },
  };
}
