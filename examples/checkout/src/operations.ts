/** The three operations of a checkout, typed from the gateway's SDL by the client preset. */
import { graphql } from './gql/index.js';

export const CreateCheckout = graphql(`
  mutation CreateCheckout($input: CreateTransactionInput!, $idempotencyKey: String) {
    createTransaction(input: $input, idempotencyKey: $idempotencyKey) {
      transaction { id status amountMoney { amount currencyIso } }
      userErrors { field message code }
    }
  }
`);

export const PayWithPhone = graphql(`
  mutation PayWithPhone($id: ID!, $mode: String!, $phone: PhoneNumberInput!, $idempotencyKey: String) {
    sendTransaction(id: $id, mode: $mode, phoneNumber: $phone, idempotencyKey: $idempotencyKey) {
      transaction { id status }
      userErrors { field message code }
    }
  }
`);

export const CheckoutStatus = graphql(`
  subscription CheckoutStatus($id: ID!) {
    transactionUpdated(id: $id) { id status lastErrorCode }
  }
`);
