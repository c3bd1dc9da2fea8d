/** Currencies: the account's list (cached per caller by the gateway). */
import type { PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import { currencyModel } from '../models.js';
import type { Fetch } from './fetch.js';

const currency = resourceShape('currency', 'currencies', currencyModel);

export function currencies({ many }: Fetch): PaymentsApi['currencies'] {
  return {
    list: (opts) => many(currency, { method: 'GET', pattern: '/v1/currencies' }, opts),
  };
}
