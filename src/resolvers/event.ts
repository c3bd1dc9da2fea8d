import type { Resolvers } from '../__generated__/resolvers-types.js';
import { eventCheck } from '../payments/filters.js';
import { Decimal } from '../upstream/index.js';
import {
  currencyModel,
  customerModel,
  payoutModel,
  transactionModel,
  webhookModel,
  type EventModel,
} from '../upstream/index.js';
import { connectionField } from './connections.js';
import { renamed, toOptionalUpstreamId, toUpstreamId } from './support.js';

const ENTITY_KINDS = {
  transaction: { typename: 'Transaction', model: transactionModel },
  payout: { typename: 'Payout', model: payoutModel },
  customer: { typename: 'Customer', model: customerModel },
  currency: { typename: 'Currency', model: currencyModel },
  webhook: { typename: 'Webhook', model: webhookModel },
} as const;

/** An unknown kind or a snapshot that does not fit its model is `null`: `rawEntity` still has the JSON. */
function typedEntity(event: EventModel) {
  const prefix = event.type.split('.')[0] as keyof typeof ENTITY_KINDS;
  const kind = Object.hasOwn(ENTITY_KINDS, prefix) ? ENTITY_KINDS[prefix] : undefined;
  if (!kind || !event.entity) return null;
  const parsed = kind.model.safeParse(event.entity);
  // graphql-js resolves the union member from `__typename`.
  return parsed.success ? { ...parsed.data, __typename: kind.typename } : null;
}

/**
 * A webhook entity holds its amounts as `Decimal`s, which JSON would write as
 * strings: here they are numbers again, as the upstream sent them.
 */
function rawEntity(event: EventModel): Record<string, unknown> | null {
  const entity = event.entity;
  if (!entity) return null;
  let out: Record<string, unknown> | null = null;
  for (const key in entity) {
    const value = entity[key];
    if (!(value instanceof Decimal)) continue;
    out ??= { ...entity };
    out[key] = Number(value.toString());
  }
  return out ?? entity;
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
    rawEntity: (e) => rawEntity(e),
    ...renamed<EventModel>()('object_id', 'account_id', 'created_at', 'updated_at', 'deleted_at'),
  },
} satisfies Resolvers;
