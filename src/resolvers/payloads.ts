/**
 * Parent shapes of the payloads whose transaction is read lazily: the token
 * and send steps answer without the transaction, so it is loaded only when
 * the caller selects it (codegen maps the payload types to these).
 */
import type { PaymentIntentModel } from '../upstream/index.js';
import type { UserError } from '../errors.js';

export interface TransactionTokenPayloadModel {
  transactionId: number | null;
  token: string | null;
  url: string | null;
  userErrors: UserError[];
}

export interface SendTransactionPayloadModel {
  transactionId: number | null;
  paymentIntents: PaymentIntentModel[];
  userErrors: UserError[];
}
