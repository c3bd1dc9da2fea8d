import type { Resolvers } from '../__generated__/resolvers-types.js';
import { connectionField } from './connections.js';
import { amountField, customerRef, customerRefChecks, metadataCheck, phoneChecks, phoneNumber, searchFilter, urlCheck } from './inputs.js';
import type { PaymentIntentModel, TransactionModel } from '../upstream/index.js';
import { idempotent } from '../idempotency/index.js';
import { cancelTransition, InputRule, isPaid, statusFromUpstream } from '../payments/rules.js';
import { buildTimeline } from '../payments/timeline.js';
import { paymentCheck } from '../payments/filters.js';
import type { Context } from '../context.js';
import type { Id } from '../upstream/index.js';
import type { Decimal } from '../upstream/index.js';
import { UserErrorCode, UserInputError } from '../errors.js';
import { amountFromInput, moneyFields } from './money.js';
import { paymentFields } from './payment-fields.js';
import {
  checkAll,
  checkInput,
  forgetWritten,
  payload,
  currencyRelation,
  customerRelation,
  renamed,
  toUpstreamId,
  withUserErrors,
} from './support.js';

const NOT_THIS_TRANSACTIONS_TOKEN =
  'This token is not the token of this transaction: nothing was sent. Pass the token createTransactionToken gave for this id, or none.';

async function currentTransaction(loaders: Context['loaders'], id: Id): Promise<TransactionModel> {
  const current = await loaders.transaction.load(id);
  if (!current) throw new UserInputError([{ field: ['id'], message: 'No such transaction in this account.', code: UserErrorCode.NotFound }]);
  return current;
}

/** Safe to repeat: an already canceled transaction makes no upstream write. */
async function cancelDecision(loaders: Context['loaders'], id: Id) {
  const current = await currentTransaction(loaders, id);
  const transition = cancelTransition(current.status);
  if (transition === 'conflict') {
    throw new UserInputError([
      {
        field: null,
        message: `The transaction is ${current.status.toLowerCase()}; only a pending transaction can be canceled.`,
        code: UserErrorCode.InvalidState,
      },
    ]);
  }
  return { current, transition };
}

const transactionStatus = (api: Context['api'], id: string) => ({ kind: 'transaction', read: () => api.transactions.retrieve(toUpstreamId(id)) });

async function transactionCurrencyIso(loaders: Context['loaders'], id: Id): Promise<string | null> {
  const current = await currentTransaction(loaders, id);
  if (current.currency_id === null || current.currency_id === undefined) return null;
  return (await loaders.currencyById.load(current.currency_id))?.iso ?? null;
}

export const transactionResolvers = {
  Query: {
    transaction: (_, { id }, { loaders }) => loaders.transaction.load(toUpstreamId(id)),
    transactions: connectionField({
      filters: searchFilter,
      // The search endpoint only with a filter, the plain list otherwise (docs/graphql-contract.md, Connections).
      read: (api, page, filters) =>
        Object.values(filters).some((v) => v !== undefined) ? api.transactions.search({ ...page, ...filters }) : api.transactions.list(page),
      keep: (filters) => paymentCheck(filters),
      loader: (loaders) => loaders.transaction,
    }),
  },

  Mutation: {
    createTransaction: idempotent((_, { input }, { api, loaders }, call) =>
      payload('transaction', { root: 'input', idField: null, mapField: amountField(input) }, async () => {
        const iso = input.currency.iso.toUpperCase();
        const [amount] = await checkAll(
          async () => (await amountFromInput(input, () => iso, ['input'], true)) as Decimal,
          () =>
            checkInput([
              [InputRule.currencyIso.test(input.currency.iso), ['input', 'currency', 'iso'], InputRule.currencyIso.message],
              [!input.mode || InputRule.mode.test(input.mode), ['input', 'mode'], InputRule.mode.message],
              urlCheck(input.callbackUrl, ['input', 'callbackUrl']),
              ...customerRefChecks(input.customer, ['input', 'customer']),
              metadataCheck(input.customMetadata, ['input', 'customMetadata']),
            ]),
        );
        const created = await api.transactions.create({
          amount,
          currencyIso: input.currency.iso.toUpperCase(),
          description: input.description,
          callbackUrl: input.callbackUrl ?? undefined,
          customer: customerRef(input.customer),
          mode: input.mode ?? undefined,
          merchantReference: input.merchantReference ?? undefined,
          customMetadata: input.customMetadata ?? undefined,
        }, await call.options());
        loaders.transaction.prime(created.id, created);
        return created;
      }),
    ),

    updateTransaction: idempotent((_, { id, input }, { api, loaders, entityCache }, call) =>
      payload('transaction', { root: 'input', mapField: amountField(input), object: transactionStatus(api, id) }, async () => {
        const transactionId = toUpstreamId(id);
        const [amount] = await checkAll(
          () => amountFromInput(input, () => transactionCurrencyIso(loaders, transactionId), ['input'], false),
          () => checkInput([urlCheck(input.callbackUrl, ['input', 'callbackUrl'])]),
        );
        // A cancel already done is not done again; other changes still go through.
        const cancel = input.status === 'CANCELED' ? await cancelDecision(loaders, transactionId) : null;
        const status = cancel?.transition === 'apply' ? 'canceled' : undefined;
        const otherChanges = [input.description, amount, input.callbackUrl].some((v) => v !== null && v !== undefined);
        if (cancel && status === undefined && !otherChanges) return cancel.current;
        const updated = await api.transactions.update(transactionId, {
          description: input.description ?? undefined,
          amount,
          callbackUrl: input.callbackUrl ?? undefined,
          status,
        }, await call.options());
        // The update response lacks `mode`: Transaction.mode reads it again if selected.
        await forgetWritten({ loaders, entityCache }, 'transaction', [transactionId]);
        return updated;
      }),
    ),

    // The body is the gateway's own (`{"status": "canceled"}`): an upstream field error names no input of the caller's.
    cancelTransaction: idempotent((_, { id }, { api, loaders, entityCache }, call) =>
      // A 409 after the check (the status changed meanwhile) is named like the other refused changes.
      payload('transaction', { root: null, mapField: () => null, object: transactionStatus(api, id) }, async () => {
        const transactionId = toUpstreamId(id);
        const { current, transition } = await cancelDecision(loaders, transactionId);
        if (transition === 'already') return current;
        const updated = await api.transactions.update(transactionId, { status: 'canceled' }, await call.options());
        // The update response lacks `mode`: Transaction.mode reads it again if selected.
        await forgetWritten({ loaders, entityCache }, 'transaction', [transactionId]);
        return updated;
      }),
    ),

    createTransactionToken: idempotent((_, { id }, { api }, call) => {
      const transactionId = toUpstreamId(id);
      return withUserErrors(
        // No body at all: a field error names no input of the caller's.
        { root: null, mapField: () => null, object: transactionStatus(api, id) },
        async () => {
          const { token, url } = await api.transactions.createToken(transactionId, await call.options());
          return { transactionId, token, url, userErrors: [] };
        },
        (userErrors) => ({ transactionId: null, token: null, url: null, userErrors }),
      );
    }),

    // The upstream sends whichever transaction the token names, so a caller's token that differs
    // from `id`'s is refused before anything is sent. Each send prompts the payer's phone:
    // identical unkeyed sends running at once are made once (in-flight.ts).
    sendTransaction: idempotent((_, { id, mode, phoneNumber: phone, token: given }, { api, loaders, entityCache }, call) => {
      const transactionId = toUpstreamId(id);
      const callerToken = given ?? undefined;
      return withUserErrors(
        // A refused token is the caller's field only when the caller gave it.
        { root: null, mapField: (parts) => (parts[0] === 'token' && callerToken === undefined ? null : parts), object: transactionStatus(api, id) },
        async () => {
          checkInput([
            [InputRule.mode.test(mode), ['mode'], InputRule.mode.message],
            [callerToken === undefined || InputRule.token.test(callerToken), ['token'], InputRule.token.message],
            ...phoneChecks(phone, ['phoneNumber']),
          ]);
          // Two upstream writes: each gets its own key derived from the caller's.
          const { token } = await api.transactions.createToken(transactionId, await call.options('token'));
          if (callerToken !== undefined && callerToken !== token) {
            throw new UserInputError([{ field: ['token'], message: NOT_THIS_TRANSACTIONS_TOKEN, code: UserErrorCode.Invalid }]);
          }
          const paymentIntents = await api.transactions.send(mode, { token, phoneNumber: phoneNumber(phone) }, await call.options('send'));
          await forgetWritten({ loaders, entityCache }, 'transaction', [transactionId]);
          return { transactionId, paymentIntents, userErrors: [] };
        },
        (userErrors) => ({ transactionId: null, paymentIntents: [], userErrors }),
      );
    }, { coalesceUnkeyed: true }),
  },

  Transaction: {
    __resolveReference: (ref, { loaders }) => loaders.transaction.load(toUpstreamId(ref.id)),
    id: (t) => t.id,
    status: (t, _, context) => statusFromUpstream('Transaction', t.status, context),
    isPaid: (t) => isPaid(t.status),
    customer: (t, _, { loaders }, info) =>
      customerRelation(t.customer_id, info, loaders),
    currency: (t, _, { loaders }, info) =>
      currencyRelation(t.currency_id, info, loaders),
    // Absent (not null) when the object came from an update response: read it then.
    mode: async (t, _, { loaders }) =>
      t.mode !== undefined ? t.mode : ((await loaders.transaction.load(t.id))?.mode ?? null),
    ...paymentFields<TransactionModel>(),
    statusHistory: async (t, _, { loaders }) => buildTimeline('transaction', t, await loaders.transactionEvents.load(t.id)),
    ...renamed<TransactionModel>()('callback_url', 'approved_at', 'canceled_at', 'declined_at', 'refunded_at', 'transferred_at', 'receipt_url'),
    subAccountsCommissions: (t) =>
      (t.sub_accounts_commissions ?? []).filter(
        (c): c is Record<string, unknown> => typeof c === 'object' && c !== null && !Array.isArray(c),
      ),
  },

  PaymentIntent: {
    status: (p, _, context) => statusFromUpstream('PaymentIntent', p.status, context),
    currency: (p, _, { loaders }, info) =>
      currencyRelation(p.currency_id, info, loaders),
    ...moneyFields<PaymentIntentModel>()('amount'),
    ...renamed<PaymentIntentModel>()(
      'last_error_code',
      'created_at',
      'updated_at',
      'approved_at',
      'canceled_at',
      'deleted_at',
      'payment_method_id',
      'transaction_key',
      'account_id',
    ),
  },

  TransactionStatusHistoryEntry: {
    status: (e, _, context) => statusFromUpstream('Transaction', e.status, context),
  },

  TransactionTokenPayload: {
    transaction: (p, _, { loaders }) => (p.transactionId ? loaders.transaction.load(p.transactionId) : null),
  },

  SendTransactionPayload: {
    transaction: (p, _, { loaders }) => (p.transactionId ? loaders.transaction.load(p.transactionId) : null),
  },
} satisfies Resolvers;
