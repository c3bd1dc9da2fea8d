/**
 * Currencies: one by id through the spec's endpoint 13, and the account's
 * list, which the spec does not define, for what only it can answer (by ISO
 * code, all of them). Both are cached per caller by the gateway.
 */
import type { PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import { currencyModel } from '../models.js';
import type { Fetch } from './fetch.js';

const currency = resourceShape('currency', 'currencies', currencyModel);

export function currencies({ byId, list }: Fetch): PaymentsApi['currencies'] {
  return {
    // The spec answers an array of one; decodeOne takes it, or an envelope, or a bare object.
    retrieve: (id, opts) => byId(currency, '/v1/currencies/:id', id, opts),
    list: (opts) => list(currency, { method: 'GET', pattern: '/v1/currencies' }, opts),
  };
}
