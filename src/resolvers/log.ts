import type { Resolvers } from '../__generated__/resolvers-types.js';
import { UPSTREAM_MAX_PER_PAGE } from '../context.js';
import { paginate, toWindow } from '../pagination.js';
import type { LogModel } from '../upstream/models.js';
import { renamed, toUpstreamId } from './support.js';

export const logResolvers = {
  Query: {
    log: (_, { id }, { loaders }) => loaders.log.load(toUpstreamId(id)),
    logs: (_, { first, after }, { api, loaders, pagination }) =>
      paginate(toWindow({ first, after }, pagination), UPSTREAM_MAX_PER_PAGE, async (page) => {
        const result = await api.logs.list(page);
        for (const l of result.items) loaders.log.prime(l.id, l);
        return result;
      }),
  },

  Log: {
    __resolveReference: (ref, { loaders }) => loaders.log.load(toUpstreamId(ref.id)),
    id: (l) => l.id,
    ...renamed<LogModel>()('ip_address', 'account_id', 'created_at', 'updated_at'),
  },
} satisfies Resolvers;
