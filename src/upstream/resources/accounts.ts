/** The caller's own account (its id scopes webhook events). */
import type { PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import { accountModel } from '../models.js';
import type { Fetch } from './fetch.js';

const account = resourceShape('account', 'accounts', accountModel);

export function accounts({ one }: Fetch): PaymentsApi['accounts'] {
  return {
    // Seen both as `{"v1/account": {...}}` and as a list `{"v1/accounts": [one]}`; decodeOne takes either.
    current: (opts) => one(account, { method: 'GET', pattern: '/v1/accounts' }, opts),
  };
}
