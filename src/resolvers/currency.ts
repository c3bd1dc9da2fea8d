import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { CurrencyModel } from '../upstream/index.js';
import type { CurrencyParent } from './parents.js';
import { renamed, toUpstreamId } from './support.js';

export const currencyResolvers = {
  Query: {
    currency: (_, { id }, { loaders }) => loaders.currencyById.load(toUpstreamId(id)),
    // The list loader primes the reads by id itself. A malformed item is its Error: graphql-js
    // reports it at the item's path (the generated types know no Error values, hence the cast).
    currencies: async (_, __, { loaders }) => (await loaders.currencies.load('all')) as (CurrencyModel | null)[],
  },

  Currency: {
    // Two keys (docs/graphql-contract.md, Federation): by id, or by ISO code from another subgraph.
    __resolveReference: (ref, { loaders }) =>
      'iso' in ref && typeof ref.iso === 'string'
        ? loaders.currencyByIso.load(ref.iso)
        : loaders.currencyById.load(toUpstreamId((ref as { id: string }).id)),
    id: (c) => c.id,
    code: (c) => {
      const code = typeof c.code === 'string' ? Number(c.code) : c.code;
      return Number.isInteger(code) ? (code as number) : null;
    },
    modes: (c) => c.modes ?? [],
    default: (c) => c.default ?? false,
    ...renamed<CurrencyParent>()('account_id', 'created_at', 'updated_at'),
  },
} satisfies Resolvers;
