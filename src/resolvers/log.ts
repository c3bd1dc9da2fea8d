import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { LogModel } from '../upstream/index.js';
import { connectionField } from './connections.js';
import { renamed, toUpstreamId } from './support.js';

function truncate(text: string | null | undefined, max: number): string | null {
  if (text === null || text === undefined) return null;
  return text.length <= max ? text : `${text.slice(0, max)}…[truncated ${text.length - max} characters]`;
}

export const logResolvers = {
  Query: {
    log: (_, { id }, { loaders }) => loaders.log.load(toUpstreamId(id)),
    logs: connectionField({ read: (api, page) => api.logs.list(page), loader: (loaders) => loaders.log }),
  },

  Log: {
    __resolveReference: (ref, { loaders }) => loaders.log.load(toUpstreamId(ref.id)),
    id: (l) => l.id,
    // Logged bodies can be large; a page of them must not become a huge answer.
    body: (l, _, { limits }) => truncate(l.body, limits.maxLogTextChars),
    response: (l, _, { limits }) => truncate(l.response, limits.maxLogTextChars),
    ...renamed<LogModel>()('ip_address', 'account_id', 'created_at', 'updated_at'),
  },
} satisfies Resolvers;
