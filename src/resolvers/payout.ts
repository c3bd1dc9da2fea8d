import type { PayoutInput, Resolvers } from '../__generated__/resolvers-types.js';
import { UPSTREAM_MAX_PER_PAGE } from '../context.js';
import { paginate, toWindow, type PageRequest } from '../pagination.js';
import type { PayoutCreateParams } from '../upstream/api.js';
import type { PayoutModel } from '../upstream/models.js';
import { idempotent } from '../idempotency/index.js';
import { InputRule, statusFromUpstream } from '../payments/rules.js';
import { buildTimeline } from '../payments/timeline.js';
import { paymentCheck } from '../payments/filters.js';
import type { Decimal } from '../upstream/decimal.js';
import { customerRef, searchFilter } from './inputs.js';
import { amountFromInput, moneyFields } from './money.js';
import { startPayouts } from './payout-start.js';
import { checkAll, checkInput, payload, currencyRelation, customerRelation, renamed, toUpstreamId } from './support.js';

async function payoutParams(input: PayoutInput): Promise<PayoutCreateParams> {
  const currencyIso = input.currency.iso.toUpperCase();
  const [amount] = await checkAll(
    async () => (await amountFromInput(input, () => currencyIso, ['input'], true)) as Decimal,
    () => checkInput([[InputRule.currencyIso.test(input.currency.iso), ['input', 'currency', 'iso'], InputRule.currencyIso.message]]),
  );
  return {
    amount,
    currencyIso,
    customer: customerRef(input.customer),
    mode: input.mode ?? undefined,
    merchantReference: input.merchantReference ?? undefined,
    customMetadata: input.customMetadata ?? undefined,
  };
}

export const payoutResolvers = {
  Query: {
    payout: (_, { id }, { loaders }) => loaders.payout.load(toUpstreamId(id)),
    // Always the search endpoint (docs/graphql-contract.md, Connections): it filters and pages alike.
    payouts: (_, { first, after, filter }, { api, loaders, pagination }) => {
      const window = toWindow({ first, after }, pagination);
      const filters = searchFilter(filter);
      return paginate(
        window,
        async (page: PageRequest) => {
          const result = await api.payouts.search({ ...page, ...filters });
          for (const p of result.items) loaders.payout.prime(p.id, p);
          return result;
        },
        { upstreamMaxPerPage: UPSTREAM_MAX_PER_PAGE, keep: paymentCheck(filters) },
      );
    },
  },

  Mutation: {
    createPayout: idempotent((_, { input }, { api, loaders }, call) =>
      payload('payout', 'input', async () => {
        const created = await api.payouts.create(await payoutParams(input), await call.options());
        loaders.payout.prime(created.id, created);
        return created;
      }),
    ),

    updatePayout: idempotent((_, { id, input }, { api, loaders, entityCache }, call) =>
      payload('payout', 'input', async () => {
        const payoutId = toUpstreamId(id);
        const updated = await api.payouts.update(payoutId, await payoutParams(input), await call.options());
        loaders.payout.clear(payoutId).prime(payoutId, updated);
        await entityCache.evict('payout', [payoutId]);
        return updated;
      }),
    ),

    startPayouts: idempotent((_, { payouts }, context, call) => startPayouts(payouts, context, call)),
  },

  Payout: {
    __resolveReference: (ref, { loaders }) => loaders.payout.load(toUpstreamId(ref.id)),
    id: (p) => p.id,
    status: (p, _, { logger }) => statusFromUpstream('Payout', p.status, logger),
    customer: (p, _, { loaders }, info) =>
      customerRelation(p.customer_id, info, loaders),
    currency: (p, _, { loaders }, info) =>
      currencyRelation(p.currency_id, info, loaders),
    ...moneyFields<PayoutModel>()('amount', 'commission', 'fees', 'fixed_commission', 'amount_transferred', 'amount_debited'),
    statusHistory: async (p, _, { loaders }) => buildTimeline('payout', p, await loaders.payoutEvents.load(p.id)),
    ...renamed<PayoutModel>()(
      'last_error_code',
      'created_at',
      'updated_at',
      'scheduled_at',
      'sent_at',
      'failed_at',
      'deleted_at',
      'custom_metadata',
      'payment_method_id',
      'transaction_key',
      'merchant_reference',
      'account_id',
      'balance_id',
    ),
  },

  PayoutStatusHistoryEntry: {
    status: (e, _, { logger }) => statusFromUpstream('Payout', e.status, logger),
  },
} satisfies Resolvers;
