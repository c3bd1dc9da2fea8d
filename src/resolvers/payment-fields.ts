/**
 * The GraphQL fields a transaction and a payout share, from the REST fields
 * both carry (src/upstream/models.ts, `payment`): their amounts as Money with
 * Float twins, and the others under their camelCase names.
 */
import { MONEY_KEYS, type PayoutModel, type TransactionModel } from '../upstream/index.js';
import { moneyFields } from './money.js';
import { renamed } from './support.js';

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
