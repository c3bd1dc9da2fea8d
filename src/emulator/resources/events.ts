/** Events: read-only; list filters `type` and `object_id` (also as `filters[...]`). */
import { ok, type ApiRouter } from '../http/types.js';
import { filterParam, paginate, readListQuery } from '../query.js';
import { readId } from '../validate.js';
import { findOr404 } from './common.js';

export function registerEvents(router: ApiRouter): void {
  router
    .add('GET', '/v1/events', (ctx) => {
      const q = readListQuery(ctx.query);
      const typeRaw = filterParam(ctx.query, 'type');
      const type = typeof typeRaw === 'string' && typeRaw !== '' ? typeRaw : undefined;
      const objectId = readId(filterParam(ctx.query, 'object_id'), q.errs, 'object_id');
      q.errs.throwIfAny('Invalid list parameters');
      const { items, meta } = paginate(
        ctx.engine.events.all(ctx.account.id),
        (e) =>
          (type === undefined || e.type === type) &&
          (objectId === undefined || e.object_id === objectId) &&
          (q.createdAfter === undefined || Date.parse(e.created_at) >= q.createdAfter) &&
          (q.createdBefore === undefined || Date.parse(e.created_at) <= q.createdBefore),
        q,
      );
      return ok(ctx.engine.render.many('event', items, meta));
    })
    .add('GET', '/v1/events/:id', (ctx) =>
      ok(ctx.engine.render.arrayOfOne('event', findOr404(ctx.engine.events, ctx.account.id, ctx.params.id, 'Event'))),
    );
}
