import type { Resolvers } from '../__generated__/resolvers-types.js';
import { UPSTREAM_MAX_PER_PAGE } from '../context.js';
import { paginate, toWindow, type PageRequest } from '../pagination.js';
import { eventCheck } from '../payments/filters.js';
import {
  currencyModel,
  customerModel,
  payoutModel,
  transactionModel,
  webhookModel,
  type EventModel,
} from '../upstream/models.js';
import { renamed, toOptionalUpstreamId, toUpstreamId, primedList } from './support.js';

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
    events: (_, { first, after, filter }, { api, loaders, pagination }) => {
      const window = toWindow({ first, after }, pagination);
      const filters = {
        type: filter?.type ?? undefined,
        objectId: toOptionalUpstreamId(filter?.objectId, 'filter.objectId'),
      };
      return paginate(
        window,
        async (page: PageRequest) => {
          const result = await api.events.list({ ...page, ...filters });
          primedList(result.items, loaders.event);
          return result;
        },
        { upstreamMaxPerPage: UPSTREAM_MAX_PER_PAGE, keep: eventCheck(filters) },
      );
    },
  },

  Event: {
    __resolveReference: (ref, { loaders }) => loaders.event.load(toUpstreamId(ref.id)),
    id: (e) => e.id,
    entity: (e) => typedEntity(e),
    rawEntity: (e) => e.entity ?? null,
    ...renamed<EventModel>()('object_id', 'account_id', 'created_at', 'updated_at', 'deleted_at'),
  },
} satisfies Resolvers;
