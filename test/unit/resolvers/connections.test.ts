import { describe, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { connectionField } from '../../../src/resolvers/connections.js';
import type { PageRequest } from '../../../src/pagination.js';

/** Only what a connection field reads of the operation's context. */
const context = { api: {}, loaders: {}, pagination: { defaultFirst: 2, maxFirst: 100 } } as unknown as Context;

describe('connectionField', () => {
  it('reads the page the window needs with the filters, and primes every object into the loader', async () => {
    const reads: [PageRequest, unknown][] = [];
    const primed: number[] = [];
    const field = connectionField({
      filters: (filter: { status?: string } | null | undefined) => ({ status: filter?.status?.toLowerCase() }),
      read: async (_api, page, filters) => {
        reads.push([page, filters]);
        return { items: [{ id: 1 }, { id: 2 }, { id: 3 }], meta: null };
      },
      loader: () => ({ prime: (id: number) => primed.push(id) }),
    });

    const connection = await field(undefined, { first: 2, filter: { status: 'PENDING' } }, context);

    expect(reads).toEqual([[expect.objectContaining({ page: 1 }), { status: 'pending' }]]);
    expect(connection.nodes).toEqual([{ id: 1 }, { id: 2 }]);
    expect(primed).toEqual([1, 2, 3]);
  });

  it('checks first and after before the filter, and reads nothing when either is refused', async () => {
    let reads = 0;
    const field = connectionField({
      filters: (_filter: object | null | undefined): never => {
        throw new Error('the filter was read first');
      },
      read: async () => {
        reads += 1;
        return { items: [], meta: null };
      },
      loader: () => ({ prime: () => undefined }),
    });

    // A resolver may throw or reject: either way GraphQL reports the error.
    const run = async (args: { first: number; filter: object }) => field(undefined, args, context);
    await expect(run({ first: 0, filter: {} })).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT', argument: 'first' } });
    await expect(run({ first: 1, filter: {} })).rejects.toThrow('the filter was read first');
    expect(reads).toBe(0);
  });
});
