/** Events: read-only; list filters `type` and `object_id` (also as `filters[...]`). */
import type { ApiRouter } from '../http/types.js';
import { filterParam } from '../query.js';
import { readId } from '../validate.js';
import { getRoute, listRoute } from './common.js';

export function registerEvents(router: ApiRouter): void {
  router
    .add(
      'GET',
      '/v1/events',
      listRoute('event', 'events', (q, ctx) => {
        const typeRaw = filterParam(ctx.query, 'type');
        const type = typeof typeRaw === 'string' && typeRaw !== '' ? typeRaw : undefined;
        const objectId = readId(filterParam(ctx.query, 'object_id'), q.errs, 'object_id');
        return (e) =>
          (type === undefined || e.type === type) &&
          (objectId === undefined || e.object_id === objectId) &&
          (q.createdAfter === undefined || Date.parse(e.created_at) >= q.createdAfter) &&
          (q.createdBefore === undefined || Date.parse(e.created_at) <= q.createdBefore);
      }),
    )
    .add('GET', '/v1/events/:id', getRoute('event', 'events', 'Event', 'arrayOfOne'));
}
