/** Currencies: each account gets XOF (the default) and GNF when it is created; read-only. */
import { ok, type ApiRouter } from '../http/types.js';
import { paginate, readListQuery } from '../query.js';
import { findOr404 } from './common.js';

export function registerCurrencies(router: ApiRouter): void {
  router
    .add('GET', '/v1/currencies', (ctx) => {
      const q = readListQuery(ctx.query);
      q.errs.throwIfAny('Invalid list parameters');
      const { items, meta } = paginate(ctx.engine.currencies.all(ctx.account.id), () => true, q);
      return ok(ctx.engine.render.many('currency', items, meta));
    })
    .add('GET', '/v1/currencies/:id', (ctx) =>
      ok(ctx.engine.render.arrayOfOne('currency', findOr404(ctx.engine.currencies, ctx.account.id, ctx.params.id, 'Currency'))),
    );
}
