import type { Resolvers } from '../__generated__/resolvers-types.js';
import { eventCheck } from '../payments/filters.js';
import {
  currencyModel,
  customerModel,
  payoutModel,
  transactionModel,
  webhookModel,
  type EventModel,
} from '../upstream/models.js';
import { connectionField } from './connections.js';
import { renamed, toOptionalUpstreamId, toUpstreamId } from './support.js';

/** Event type prefix (`transaction.approved`) -> the typed object its entity is. */
const ENTITY_KINDS = {
  transaction: { typename: 'Transaction', model: transactionModel },
  payout: { typename: 'Payout', model: payoutModel },
  customer: { typename: 'Customer', model: customerModel },
  currency: { typename: 'Currency', model: currencyModel },
  webhook: { typename: 'Webhook', model: webhookModel },
} as const;

/**
 * The entity snapshot the event carries (the object as it was when the event
 * happened), typed by the event's prefix. An unknown kind or a snapshot that
 * does not fit its model is `null`: `rawEntity` still has the JSON.
 */
function typedEntity(event: EventModel) {
  const prefix = event.type.split('.')[0] as keyof typeof ENTITY_KINDS;
  const kind = Object.hasOwn(ENTITY_KINDS, prefix) ? ENTITY_KINDS[prefix] : undefined;
  if (!kind || !event.entity) return null;
  const parsed = kind.model.safeParse(event.entity);
  // graphql-js resolves the union member from `__typename`.
  return parsed.success ? { ...parsed.data, __typename: kind.typename } : null;
}

export const eventResolvers = {
  Query: {
    event: (_, { id }, { loaders }) => loaders.event.load(toUpstreamId(id)),
    events: connectionField({
      filters: (filter) => ({ type: filter?.type ?? undefined, objectId: toOptionalUpstreamId(filter?.objectId, 'filter.objectId') }),
      read: (api, page, filters) => api.events.list({ ...page, ...filters }),
      keep: (filters) => eventCheck(filters),
      loader: (loaders) => loaders.event,
    }),
  },

  Event: {
    __resolveReference: (ref, { loaders }) => loaders.event.load(toUpstreamId(ref.id)),
    id: (e) => e.id,
    entity: (e) => typedEntity(e),
    rawEntity: (e) => e.entity ?? null,
    ...renamed<EventModel>()('object_id', 'account_id', 'created_at', 'updated_at', 'deleted_at'),
  },
} satisfies Resolvers;
