/**
 * The GraphQL fields a transaction and a payout share, from the REST fields
 * both carry (src/upstream/models.ts, `payment`): their amounts as Money with
 * Float twins, and the others under their camelCase names.
 */
import { MONEY_KEYS, type PayoutModel, type TransactionModel } from '../upstream/models.js';
import type { ListRelation } from './look-ahead.js';
import { moneyFields } from './money.js';
import { renamed } from './support.js';

/** The to-one relations of a transaction or payout, which their connections read ahead (look-ahead.ts). */
export function paymentRelations<Model extends TransactionModel | PayoutModel>(): readonly ListRelation<Model>[] {
  return [
    { field: 'customer', key: (payment) => payment.customer_id, loader: (loaders) => loaders.customer },
    { field: 'currency', key: (payment) => payment.currency_id, loader: (loaders) => loaders.currencyById },
  ];
}

const SHARED_KEYS = [
  'last_error_code',
  'created_at',
  'updated_at',
  'deleted_at',
  'custom_metadata',
  'payment_method_id',
  'transaction_key',
  'merchant_reference',
  'account_id',
  'balance_id',
] as const;

export function paymentFields<Model extends TransactionModel | PayoutModel>() {
  return { ...moneyFields<Model>()(...MONEY_KEYS), ...renamed<Model>()(...SHARED_KEYS) };
}
