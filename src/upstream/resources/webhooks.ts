/** Webhook endpoints of the account: `/v1/webhooks` (read-only through the gateway). */
import type { PaymentsApi } from '../api.js';
import { resourceShape } from '../decode.js';
import { webhookModel } from '../models.js';
import type { Fetch } from './fetch.js';

const webhook = resourceShape('webhook', 'webhooks', webhookModel);

export function webhooks({ byId, list }: Fetch): PaymentsApi['webhooks'] {
  return {
    list: (opts) => list(webhook, { method: 'GET', pattern: '/v1/webhooks' }, opts),
    retrieve: (id, opts) => byId(webhook, '/v1/webhooks/:id', id, opts),
  };
}
