import type { Resolvers, TransactionStatus } from '../__generated__/resolvers-types.js';
import { UPSTREAM_MAX_PER_PAGE } from '../context.js';
import { paginate, toWindow } from '../pagination.js';
import type { TransactionSearchFilter } from './inputs.js';
import { customerRef, phoneNumber, searchFilter } from './inputs.js';
import type { TransactionModel } from '../upstream/models.js';
import { idempotent } from '../idempotency/index.js';
import {
  checkInput,
  payload,
  currencyRelation,
  customerRelation,
  renamed,
  statusEnum,
  toUpstreamId,
  withUserErrors,
} from './support.js';

const STATUSES: readonly TransactionStatus[] = [
  'PENDING',
  'APPROVED',
  'DECLINED',
  'CANCELED',
  'REFUNDED',
  'TRANSFERRED',
  'APPROVED_PARTIALLY_REFUNDED',
  'TRANSFERRED_PARTIALLY_REFUNDED',
  'EXPIRED',
];

/** Paid = approved, transferred, refunded or a partial refund (upstream.md, Statuses). */
const PAID = new Set(['approved', 'transferred', 'refunded', 'approved_partially_refunded', 'transferred_partially_refunded']);

const MODE_PATTERN = /^[a-z0-9_]+$/;

export const transactionResolvers = {
  Query: {
    transaction: (_, { id }, { loaders }) => loaders.transaction.load(toUpstreamId(id)),
    transactions: (_, { first, after, filter }, { api, loaders, pagination }) => {
      const window = toWindow({ first, after }, pagination);
      const filters: TransactionSearchFilter = searchFilter(filter);
      const hasFilter = Object.values(filters).some((v) => v !== undefined);
      return paginate(window, UPSTREAM_MAX_PER_PAGE, async (page) => {
        const result = hasFilter
          ? await api.transactions.search({ ...page, ...filters })
          : await api.transactions.list(page);
        for (const t of result.items) loaders.transaction.prime(t.id, t);
        return result;
      });
    },
  },

  Mutation: {
    createTransaction: idempotent((_, { input }, { api, loaders }, call) =>
      payload('transaction', 'input', async () => {
        checkInput([
          [input.amount > 0, ['input', 'amount'], 'Amount must be greater than 0.'],
          [/^[A-Za-z]{3}$/.test(input.currency.iso), ['input', 'currency', 'iso'], 'Currency must be an ISO 4217 code such as XOF.'],
          [!input.mode || MODE_PATTERN.test(input.mode), ['input', 'mode'], 'Mode must be a mode name such as mtn or moov.'],
        ]);
        const created = await api.transactions.create({
          amount: input.amount,
          currencyIso: input.currency.iso.toUpperCase(),
          description: input.description,
          callbackUrl: input.callbackUrl?.toString(),
          customer: customerRef(input.customer),
          mode: input.mode ?? undefined,
          merchantReference: input.merchantReference ?? undefined,
          customMetadata: input.customMetadata ?? undefined,
        }, call.options());
        loaders.transaction.prime(created.id, created);
        return created;
      }),
    ),

    updateTransaction: idempotent((_, { id, input }, { api, loaders }, call) =>
      payload('transaction', 'input', async () => {
        const transactionId = toUpstreamId(id);
        checkInput([[input.amount == null || input.amount > 0, ['input', 'amount'], 'Amount must be greater than 0.']]);
        const updated = await api.transactions.update(transactionId, {
          description: input.description ?? undefined,
          amount: input.amount ?? undefined,
          callbackUrl: input.callbackUrl?.toString(),
          status: input.status ? input.status.toLowerCase() : undefined,
        }, call.options());
        // The update response lacks `mode` (spec, Transaction table): forget any
        // cached copy so Transaction.mode reads it fresh, and only if selected.
        loaders.transaction.clear(transactionId);
        return updated;
      }),
    ),

    createTransactionToken: idempotent((_, { id }, { api }, call) => {
      const transactionId = toUpstreamId(id);
      return withUserErrors(
        null,
        async () => {
          const { token, url } = await api.transactions.createToken(transactionId, call.options());
          return { transactionId, token, url, userErrors: [] };
        },
        (userErrors) => ({ transactionId: null, token: null, url: null, userErrors }),
      );
    }),

    // Spec rule 2: the send step needs a fresh token, so one mutation does both.
    sendTransaction: idempotent((_, { id, mode, phoneNumber: phone }, { api, loaders }, call) => {
      const transactionId = toUpstreamId(id);
      return withUserErrors(
        null,
        async () => {
          checkInput([[MODE_PATTERN.test(mode), ['mode'], 'Mode must be a mode name such as mtn or moov.']]);
          // Two upstream writes: each gets its own key derived from the caller's.
          const { token } = await api.transactions.createToken(transactionId, call.options('token'));
          const paymentIntents = await api.transactions.send(mode, { token, phoneNumber: phoneNumber(phone) }, call.options('send'));
          loaders.transaction.clear(transactionId);
          return { transactionId, paymentIntents, userErrors: [] };
        },
        (userErrors) => ({ transactionId: null, paymentIntents: [], userErrors }),
      );
    }),
  },

  Transaction: {
    __resolveReference: (ref, { loaders }) => loaders.transaction.load(toUpstreamId(ref.id)),
    id: (t) => t.id,
    status: (t, _, { logger }) => statusEnum(t.status, STATUSES, logger, 'Transaction.status'),
    isPaid: (t) => PAID.has(t.status.toLowerCase()),
    customer: (t, _, { loaders }, info) =>
      customerRelation(t.customer_id, info, loaders),
    currency: (t, _, { loaders }, info) =>
      currencyRelation(t.currency_id, info, loaders),
    // Absent (not null) when the object came from an update response: read it then.
    mode: async (t, _, { loaders }) =>
      t.mode !== undefined ? t.mode : ((await loaders.transaction.load(t.id))?.mode ?? null),
    ...renamed<TransactionModel>()(
      'callback_url',
      'fixed_commission',
      'amount_transferred',
      'amount_debited',
      'created_at',
      'updated_at',
      'approved_at',
      'canceled_at',
      'declined_at',
      'refunded_at',
      'transferred_at',
      'deleted_at',
      'last_error_code',
      'custom_metadata',
      'receipt_url',
      'payment_method_id',
      'transaction_key',
      'merchant_reference',
      'account_id',
      'balance_id',
    ),
    subAccountsCommissions: (t) =>
      (t.sub_accounts_commissions ?? []).filter(
        (c): c is Record<string, unknown> => typeof c === 'object' && c !== null && !Array.isArray(c),
      ),
  },

  PaymentIntent: {
    status: (p, _, { logger }) => statusEnum(p.status, ['PENDING', 'APPROVED', 'CANCELED'] as const, logger, 'PaymentIntent.status'),
    currency: (p, _, { loaders }, info) =>
      currencyRelation(p.currency_id, info, loaders),
    lastErrorCode: (p) => p.last_error_code ?? null,
    createdAt: (p) => p.created_at ?? null,
    updatedAt: (p) => p.updated_at ?? null,
    approvedAt: (p) => p.approved_at ?? null,
    canceledAt: (p) => p.canceled_at ?? null,
    deletedAt: (p) => p.deleted_at ?? null,
    paymentMethodId: (p) => p.payment_method_id ?? null,
    transactionKey: (p) => p.transaction_key ?? null,
    accountId: (p) => p.account_id ?? null,
  },

  TransactionTokenPayload: {
    transaction: (p, _, { loaders }) => (p.transactionId ? loaders.transaction.load(p.transactionId) : null),
  },

  SendTransactionPayload: {
    transaction: (p, _, { loaders }) => (p.transactionId ? loaders.transaction.load(p.transactionId) : null),
  },
} satisfies Resolvers;
