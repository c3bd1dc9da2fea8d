import type { PayoutInput, PayoutStatus, Resolvers } from '../__generated__/resolvers-types.js';
import { UPSTREAM_MAX_PER_PAGE } from '../context.js';
import { paginate, toWindow } from '../pagination.js';
import type { PayoutCreateParams } from '../upstream/api.js';
import type { PayoutModel } from '../upstream/models.js';
import { idempotent } from '../idempotency/index.js';
import { customerRef, phoneNumber, searchFilter } from './inputs.js';
import { checkInput, isoString, payload, currencyRelation, customerRelation, renamed, statusEnum, toUpstreamId, withUserErrors } from './support.js';

const STATUSES: readonly PayoutStatus[] = ['PENDING', 'SCHEDULED', 'STARTED', 'PROCESSING', 'SENT', 'FAILED'];

function payoutParams(input: PayoutInput): PayoutCreateParams {
  checkInput([
    [input.amount > 0, ['input', 'amount'], 'Amount must be greater than 0.'],
    [/^[A-Za-z]{3}$/.test(input.currency.iso), ['input', 'currency', 'iso'], 'Currency must be an ISO 4217 code such as XOF.'],
  ]);
  return {
    amount: input.amount,
    currencyIso: input.currency.iso.toUpperCase(),
    customer: customerRef(input.customer),
    mode: input.mode ?? undefined,
    merchantReference: input.merchantReference ?? undefined,
    customMetadata: input.customMetadata ?? undefined,
  };
}

export const payoutResolvers = {
  Query: {
    payout: (_, { id }, { loaders }) => loaders.payout.load(toUpstreamId(id)),
    // Always the search endpoint (api.md): it filters and pages alike.
    payouts: (_, { first, after, filter }, { api, loaders, pagination }) => {
      const window = toWindow({ first, after }, pagination);
      const filters = searchFilter(filter);
      return paginate(window, UPSTREAM_MAX_PER_PAGE, async (page) => {
        const result = await api.payouts.search({ ...page, ...filters });
        for (const p of result.items) loaders.payout.prime(p.id, p);
        return result;
      });
    },
  },

  Mutation: {
    createPayout: idempotent((_, { input }, { api, loaders }, call) =>
      payload('payout', 'input', async () => {
        const created = await api.payouts.create(payoutParams(input), call.options());
        loaders.payout.prime(created.id, created);
        return created;
      }),
    ),

    updatePayout: idempotent((_, { id, input }, { api, loaders }, call) =>
      payload('payout', 'input', async () => {
        const payoutId = toUpstreamId(id);
        const updated = await api.payouts.update(payoutId, payoutParams(input), call.options());
        loaders.payout.clear(payoutId).prime(payoutId, updated);
        return updated;
      }),
    ),

    // One upstream request for the whole batch (spec rule 1); the upstream
    // refuses a batch with an invalid item as a whole, so nothing starts half-way.
    startPayouts: idempotent((_, { payouts }, { api, loaders }, call) =>
      withUserErrors(
        'payouts',
        async () => {
          checkInput([[payouts.length > 0, ['payouts'], 'Give at least one payout to start.']]);
          const started = await api.payouts.start(
            payouts.map((p, i) => ({
              id: toUpstreamId(p.id, `payouts.${i}.id`),
              scheduledAt: isoString(p.scheduledAt),
              phoneNumber: phoneNumber(p.phoneNumber),
            })),
            call.options(),
          );
          for (const p of started) loaders.payout.clear(p.id).prime(p.id, p);
          return { payouts: started, userErrors: [] };
        },
        (userErrors) => ({ payouts: [], userErrors }),
      ),
    ),
  },

  Payout: {
    __resolveReference: (ref, { loaders }) => loaders.payout.load(toUpstreamId(ref.id)),
    id: (p) => p.id,
    status: (p, _, { logger }) => statusEnum(p.status, STATUSES, logger, 'Payout.status'),
    customer: (p, _, { loaders }, info) =>
      customerRelation(p.customer_id, info, loaders),
    currency: (p, _, { loaders }, info) =>
      currencyRelation(p.currency_id, info, loaders),
    ...renamed<PayoutModel>()(
      'last_error_code',
      'fixed_commission',
      'amount_transferred',
      'amount_debited',
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
} satisfies Resolvers;
