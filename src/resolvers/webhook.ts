import type { Resolvers } from '../__generated__/resolvers-types.js';
import type { WebhookModel } from '../upstream/index.js';
import { primedList, renamed, toUpstreamId } from './support.js';

export const webhookResolvers = {
  Query: {
    webhook: (_, { id }, { loaders }) => loaders.webhook.load(toUpstreamId(id)),
    webhooks: async (_, __, { api, loaders }) => primedList(await api.webhooks.list(), loaders.webhook),
  },

  Webhook: {
    __resolveReference: (ref, { loaders }) => loaders.webhook.load(toUpstreamId(ref.id)),
    id: (w) => w.id,
    // Some upstream versions send the headers themselves; the schema says whether any are set.
    httpHeaders: (w) =>
      typeof w.http_headers === 'object' && w.http_headers !== null
        ? Object.keys(w.http_headers).length > 0
        : (w.http_headers ?? null),
    ...renamed<WebhookModel>()('ssl_verify', 'disable_on_error', 'account_id', 'created_at', 'updated_at'),
  },
} satisfies Resolvers;
