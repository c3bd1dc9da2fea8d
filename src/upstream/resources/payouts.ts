/** Payouts: `/v1/payouts`, its search, and starting several in one request (docs/upstream.md, Operations). */
import type { PaymentsApi, PayoutCreateParams, PayoutStartItem } from '../api.js';
import { resourceShape } from '../decode.js';
import { payoutModel } from '../models.js';
import { currencyBody, customerRefBody, phoneNumberBody, type Fetch } from './fetch.js';
import { paymentReads } from './transactions.js';

const payout = resourceShape('payout', 'payouts', payoutModel);

export function payouts({ byId, many, one, page }: Fetch): PaymentsApi['payouts'] {
  return {
    ...paymentReads({ byId, page }, payout, '/v1/payouts'),
    create: (params, opts) =>
      one(payout, { method: 'POST', pattern: '/v1/payouts', body: payoutBody(params), bodyIds: { 'customer.id': params.customer?.id } }, opts),
    update: (id, params, opts) =>
      one(
        payout,
        { method: 'PUT', pattern: '/v1/payouts/:id', path: { id }, body: payoutBody(params), bodyIds: { 'customer.id': params.customer?.id } },
        opts,
      ),
    start: (items, opts) =>
      many(
        payout,
        {
          method: 'PUT',
          pattern: '/v1/payouts/start',
          body: startBody(items),
          bodyIds: Object.fromEntries(items.map((item, i) => [`payouts[${i}].id`, item.id])),
        },
        opts,
      ),
  };
}

function payoutBody(params: Partial<PayoutCreateParams>) {
  return {
    amount: params.amount,
    currency: currencyBody(params.currencyIso),
    customer: customerRefBody(params.customer),
    mode: params.mode,
    merchant_reference: params.merchantReference,
    custom_metadata: params.customMetadata,
  };
}

function startBody(items: PayoutStartItem[]) {
  // The spec shows a bare array; the client libraries send `{"payouts": [...]}` (docs/upstream.md, Operations).
  return {
    payouts: items.map((item) => ({ id: item.id, scheduled_at: item.scheduledAt, phone_number: phoneNumberBody(item.phoneNumber) })),
  };
}
