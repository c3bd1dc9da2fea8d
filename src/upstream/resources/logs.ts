/** Logs: the account's API requests as the upstream recorded them. */
import type { PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import { logModel } from '../models.js';
import { pageQuery, type Fetch } from './fetch.js';

const log = resourceShape('log', 'logs', logModel);

export function logs({ byId, page }: Fetch): PaymentsApi['logs'] {
  return {
    retrieve: (id, opts) => byId(log, '/v1/logs/:id', id, opts),
    list: (params, opts) => page(log, { method: 'GET', pattern: '/v1/logs', query: pageQuery(params) }, params, opts),
  };
}
