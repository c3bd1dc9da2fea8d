/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** A new transaction. It starts `PENDING`; `createTransactionToken` and `sendTransaction` then collect it. */
export type CreateTransactionInput = {
  /**
   * Amount to collect, in the currency's unit; must be above zero. Give this or `amountDecimal`.
   * @deprecated Use `amountDecimal`: a Float cannot hold every amount exactly.
   */
  amount?: number | null | undefined;
  /**
   * Amount to collect, exact, in the currency's unit: above zero, with no more decimals than the
   * currency has (ISO 4217: 0 for XOF, 2 for USD), else a `userErrors` entry on this field.
   */
  amountDecimal?: string | null | undefined;
  /** URL the payer is sent back to after the hosted checkout. */
  callbackUrl?: string | null | undefined;
  /** Currency of the amount. */
  currency: CurrencyRefInput;
  /** Custom metadata, returned as `customMetadata`. */
  customMetadata?: Record<string, unknown> | null | undefined;
  /** The payer: an existing customer's id, or the details of a customer to create. */
  customer?: CustomerRefInput | null | undefined;
  /** Description, shown to the payer. */
  description: string;
  /** Merchant reference. */
  merchantReference?: string | null | undefined;
  /** Mode to collect through, such as `mtn` or `moov`. */
  mode?: string | null | undefined;
};

/** A currency named by its ISO 4217 alphabetic code. */
export type CurrencyRefInput = {
  /** ISO 4217 alphabetic code, such as `XOF`. */
  iso: string;
};

/**
 * The customer of a transaction or payout: either `id` of an existing customer, or the
 * details of a customer the upstream creates inline (`firstname`, `lastname`, `email`, `phoneNumber`).
 * It works like a `@oneOf` input with two branches: giving `id` together with any detail is a
 * `userErrors` entry with code `INVALID` on the path of this input (such as `["input", "customer"]`),
 * and nothing is sent upstream. (Not the `@oneOf` directive itself: federation does not accept it, and the details branch has several fields.)
 */
export type CustomerRefInput = {
  /** E-mail address of a customer to create. */
  email?: string | null | undefined;
  /** First name of a customer to create. */
  firstname?: string | null | undefined;
  /** ID of an existing customer. */
  id?: string | null | undefined;
  /** Last name of a customer to create. */
  lastname?: string | null | undefined;
  /** Phone number of a customer to create. */
  phoneNumber?: PhoneNumberInput | null | undefined;
};

/** Kinds of `PaymentsUserError`. */
export type PaymentsUserErrorCode =
  /** The value is malformed or out of range (e.g. an amount not above zero). */
  | 'INVALID'
  /** The object is not in a status that allows this operation (e.g. cancelling a transferred transaction). */
  | 'INVALID_STATE'
  /** The input refers to an object that does not exist (e.g. an unknown customer id). */
  | 'NOT_FOUND'
  /** A value the operation needs is missing. */
  | 'REQUIRED'
  /** The upstream refused the input without saying why in a way the gateway recognises. */
  | 'UNKNOWN';

/** A phone number, as sent to the payments API. */
export type PhoneNumberInput = {
  /** Country of the number, upper-case ISO 3166-1 alpha-2 (e.g. `BJ`). */
  country: string;
  /** Subscriber number, with or without the international prefix. */
  number: string;
};

/** Status of a transaction. The upstream publishes no transition table; a transaction starts `PENDING`. */
export type TransactionStatus =
  /** Paid by the payer. */
  | 'APPROVED'
  /** Paid, then refunded in part. */
  | 'APPROVED_PARTIALLY_REFUNDED'
  /** Canceled before payment. */
  | 'CANCELED'
  /** Refused by the payer or the mode. */
  | 'DECLINED'
  /** Not paid in time. Reported by the API family but unconfirmed. */
  | 'EXPIRED'
  /** Created, waiting for the payer. */
  | 'PENDING'
  /** Paid, then refunded in full. */
  | 'REFUNDED'
  /** Paid and transferred to the account. */
  | 'TRANSFERRED'
  /** Paid and transferred, then refunded in part. */
  | 'TRANSFERRED_PARTIALLY_REFUNDED'
  /** A status the upstream sent that the gateway does not know yet (logged, kept as data). */
  | 'UNKNOWN';

export type CreateCheckoutMutationVariables = Exact<{
  input: CreateTransactionInput;
  idempotencyKey?: string | null | undefined;
}>;


export type CreateCheckoutMutation = { createTransaction: { transaction: { id: string, status: TransactionStatus, amountMoney: { amount: string, currencyIso: string } | null } | null, userErrors: Array<{ field: Array<string> | null, message: string, code: PaymentsUserErrorCode }> } };

export type PayWithPhoneMutationVariables = Exact<{
  id: string;
  mode: string;
  phone: PhoneNumberInput;
  idempotencyKey?: string | null | undefined;
}>;


export type PayWithPhoneMutation = { sendTransaction: { transaction: { id: string, status: TransactionStatus } | null, userErrors: Array<{ field: Array<string> | null, message: string, code: PaymentsUserErrorCode }> } };

export type CheckoutStatusSubscriptionVariables = Exact<{
  id: string;
}>;


export type CheckoutStatusSubscription = { transactionUpdated: { id: string, status: TransactionStatus, lastErrorCode: string | null } };


export const CreateCheckoutDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateCheckout"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateTransactionInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"idempotencyKey"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createTransaction"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}},{"kind":"Argument","name":{"kind":"Name","value":"idempotencyKey"},"value":{"kind":"Variable","name":{"kind":"Name","value":"idempotencyKey"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"transaction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amountMoney"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currencyIso"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<CreateCheckoutMutation, CreateCheckoutMutationVariables>;
export const PayWithPhoneDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"PayWithPhone"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"mode"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"phone"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PhoneNumberInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"idempotencyKey"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sendTransaction"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"mode"},"value":{"kind":"Variable","name":{"kind":"Name","value":"mode"}}},{"kind":"Argument","name":{"kind":"Name","value":"phoneNumber"},"value":{"kind":"Variable","name":{"kind":"Name","value":"phone"}}},{"kind":"Argument","name":{"kind":"Name","value":"idempotencyKey"},"value":{"kind":"Variable","name":{"kind":"Name","value":"idempotencyKey"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"transaction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<PayWithPhoneMutation, PayWithPhoneMutationVariables>;
export const CheckoutStatusDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"CheckoutStatus"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"transactionUpdated"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"lastErrorCode"}}]}}]}}]} as unknown as DocumentNode<CheckoutStatusSubscription, CheckoutStatusSubscriptionVariables>;