/** Events: what happened to the account's objects, newest first, filterable by type and object. */
import type { PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import { eventModel } from '../models.js';
import { pageQuery, type Fetch } from './fetch.js';

const event = resourceShape('event', 'events', eventModel);

export function events({ byId, page }: Fetch): PaymentsApi['events'] {
  return {
    retrieve: (id, opts) => byId(event, '/v1/events/:id', id, opts),
    list: (params, opts) =>
      page(event, { method: 'GET', pattern: '/v1/events', query: { ...pageQuery(params), 'filters[type]': params?.type, 'filters[object_id]': params?.objectId } }, params, opts),
  };
}
