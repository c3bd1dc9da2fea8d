/** `GET /v1/accounts`: the caller's own account, as a list of one. */
import { ok, type ApiRouter } from '../http/types.js';

export function registerAccounts(router: ApiRouter): void {
  router.add('GET', '/v1/accounts', (ctx) =>
    ok(
      ctx.engine.render.many('account', [ctx.account], {
        current_page: 1,
        next_page: null,
        prev_page: null,
        per_page: 25,
        total_pages: 1,
        total_count: 1,
      }),
    ),
  );
}
