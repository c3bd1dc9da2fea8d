/** Currencies: each account gets XOF (the default) and GNF when it is created; read-only. */
import type { ApiRouter } from '../http/types.js';
import { getRoute, listRoute } from './common.js';

export function registerCurrencies(router: ApiRouter): void {
  router.add('GET', '/v1/currencies', listRoute('currency', 'currencies')).add('GET', '/v1/currencies/:id', getRoute('currency', 'currencies', 'Currency', 'arrayOfOne'));
}
