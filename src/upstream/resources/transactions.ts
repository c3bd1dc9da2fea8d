/** Transactions: `/v1/transactions`, its search, the token step and the send step (docs/upstream.md, Operations). */
import type { CallOptions, Id, PaymentsApi, SearchParams, TransactionCreateParams } from '../api.js';
import { resourceShape, type ResourceShape } from '../decode.js';
import type { QueryValue } from '../http.js';
import { paymentIntentModel, transactionModel, transactionTokenModel } from '../models.js';
import { currencyBody, customerRefBody, pageQuery, phoneNumberBody, searchQuery, type Fetch } from './fetch.js';

const transaction = resourceShape('transaction', 'transactions', transactionModel);
const token = resourceShape('token', 'tokens', transactionTokenModel);
const paymentIntent = resourceShape('payment_intent', 'payment_intents', paymentIntentModel);

export function transactions({ byId, many, one, page }: Fetch): PaymentsApi['transactions'] {
  return {
    ...paymentReads({ byId, page }, transaction, '/v1/transactions'),
    list: (params, opts) => page(transaction, { method: 'GET', pattern: '/v1/transactions', query: pageQuery(params) }, params, opts),
    create: (params, opts) =>
      one(
        transaction,
        { method: 'POST', pattern: '/v1/transactions', body: createBody(params), bodyIds: { 'customer.id': params.customer?.id } },
        opts,
      ),
    update: (id, params, opts) =>
      one(
        transaction,
        {
          method: 'PUT',
          pattern: '/v1/transactions/:id',
          path: { id },
          body: { description: params.description, amount: params.amount, callback_url: params.callbackUrl, status: params.status },
        },
        opts,
      ),
    createToken: (id, opts) => one(token, { method: 'POST', pattern: '/v1/transactions/:id/token', path: { id } }, opts),
    send: (mode, params, opts) =>
      many(
        paymentIntent,
        {
          method: 'POST',
          pattern: '/v1/transactions/:mode',
          path: { mode },
          body: { token: params.token, phone_number: phoneNumberBody(params.phoneNumber) },
        },
        opts,
      ),
  };
}

/** The search filters transactions and payouts share. */
export function paymentSearch(params: SearchParams = {}): Record<string, QueryValue> {
  return searchQuery(params, { status: params.status, customer_id: params.customerId });
}

/** The reads transactions and payouts share: one by id at `<base>/:id`, and the search at `<base>/search`. */
export function paymentReads<T>({ byId, page }: Pick<Fetch, 'byId' | 'page'>, shape: ResourceShape<T>, base: '/v1/transactions' | '/v1/payouts') {
  return {
    retrieve: (id: Id, opts?: CallOptions) => byId(shape, `${base}/:id`, id, opts),
    search: (params?: SearchParams, opts?: CallOptions) =>
      page(shape, { method: 'GET', pattern: `${base}/search`, query: paymentSearch(params) }, params, opts),
  };
}

function createBody(params: TransactionCreateParams) {
  return {
    amount: params.amount,
    description: params.description,
    callback_url: params.callbackUrl,
    currency: currencyBody(params.currencyIso),
    customer: customerRefBody(params.customer),
    mode: params.mode,
    merchant_reference: params.merchantReference,
    custom_metadata: params.customMetadata,
  };
}
