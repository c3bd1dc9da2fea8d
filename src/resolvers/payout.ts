import type { PayoutInput, Resolvers, UpdatePayoutInput } from '../__generated__/resolvers-types.js';
import type { Context } from '../context.js';
import { UserErrorCode, UserInputError } from '../errors.js';
import type { Id, PayoutCreateParams, PayoutUpdateParams } from '../upstream/index.js';
import type { PayoutModel } from '../upstream/index.js';
import { idempotent } from '../idempotency/index.js';
import { InputRule, statusFromUpstream } from '../payments/rules.js';
import { buildTimeline } from '../payments/timeline.js';
import { paymentCheck } from '../payments/filters.js';
import type { Decimal } from '../upstream/index.js';
import { connectionField } from './connections.js';
import { amountField, customerRef, customerRefChecks, metadataCheck, searchFilter } from './inputs.js';
import { amountFromInput } from './money.js';
import { paymentFields } from './payment-fields.js';
import { startPayouts } from './payout-start.js';
import { checkAll, checkInput, forgetWritten, payload, currencyRelation, customerRelation, renamed, toUpstreamId, type Check } from './support.js';

function payoutChecks(input: PayoutInput | UpdatePayoutInput, root: string): Check[] {
  return [
    [!input.currency || InputRule.currencyIso.test(input.currency.iso), [root, 'currency', 'iso'], InputRule.currencyIso.message],
    [!input.mode || InputRule.mode.test(input.mode), [root, 'mode'], InputRule.mode.message],
    ...customerRefChecks(input.customer, [root, 'customer']),
    metadataCheck(input.customMetadata, [root, 'customMetadata']),
  ];
}

function payoutFields<A, C>(input: PayoutInput | UpdatePayoutInput, amount: A, currencyIso: C) {
  return {
    amount,
    currencyIso,
    customer: customerRef(input.customer),
    mode: input.mode ?? undefined,
    merchantReference: input.merchantReference ?? undefined,
    customMetadata: input.customMetadata ?? undefined,
  };
}

async function payoutParams(input: PayoutInput): Promise<PayoutCreateParams> {
  const currencyIso = input.currency.iso.toUpperCase();
  const [amount] = await checkAll(
    async () => (await amountFromInput(input, () => currencyIso, ['input'], true)) as Decimal,
    () => checkInput(payoutChecks(input, 'input')),
  );
  return payoutFields(input, amount, currencyIso);
}

async function payoutCurrencyIso(loaders: Context['loaders'], id: Id): Promise<string | null> {
  const current = await loaders.payout.load(id);
  if (!current) throw new UserInputError([{ field: ['id'], message: 'No such payout in this account.', code: UserErrorCode.NotFound }]);
  if (current.currency_id === null || current.currency_id === undefined) return null;
  return (await loaders.currencyById.load(current.currency_id))?.iso ?? null;
}

/** Only the fields given, so the upstream changes those alone. */
async function payoutChanges(changes: UpdatePayoutInput, id: Id, loaders: Context['loaders']): Promise<PayoutUpdateParams> {
  // No field given would be a write that changes nothing.
  if (Object.values(changes).every((v) => v === null || v === undefined)) {
    throw new UserInputError([{ field: ['changes'], message: 'Give at least one field to change.', code: UserErrorCode.Required }]);
  }
  const currencyIso = changes.currency?.iso.toUpperCase();
  const [amount] = await checkAll(
    () => amountFromInput(changes, () => currencyIso ?? payoutCurrencyIso(loaders, id), ['changes'], false),
    () => checkInput(payoutChecks(changes, 'changes')),
  );
  return payoutFields(changes, amount, currencyIso);
}

/** Exactly one of them. */
function updateArgument(changes: UpdatePayoutInput | null | undefined, input: PayoutInput | null | undefined) {
  const given = (v: unknown) => v !== null && v !== undefined;
  if (given(changes) === given(input)) {
    const message = given(changes) ? 'Give `changes` or `input`, not both.' : 'Give the changes to make as `changes` (or `input`, in create\'s shape).';
    throw new UserInputError([{ field: ['changes'], message, code: given(changes) ? UserErrorCode.Invalid : UserErrorCode.Required }]);
  }
  return changes ? { changes } : { input: input as PayoutInput };
}

export const payoutResolvers = {
  Query: {
    payout: (_, { id }, { loaders }) => loaders.payout.load(toUpstreamId(id)),
    // Always the search endpoint (docs/graphql-contract.md, Connections): it filters and pages alike.
    payouts: connectionField({
      filters: searchFilter,
      read: (api, page, filters) => api.payouts.search({ ...page, ...filters }),
      keep: (filters) => paymentCheck(filters),
      loader: (loaders) => loaders.payout,
    }),
  },

  Mutation: {
    createPayout: idempotent((_, { input }, { api, loaders }, call) =>
      payload('payout', { root: 'input', idField: null, mapField: amountField(input) }, async () => {
        const created = await api.payouts.create(await payoutParams(input), await call.options());
        loaders.payout.prime(created.id, created);
        return created;
      }),
    ),

    updatePayout: idempotent((_, { id, changes, input }, { api, loaders, entityCache }, call) =>
      payload('payout', {
        ...(changes ? { root: 'changes', mapField: amountField(changes) } : { root: 'input', mapField: amountField(input ?? {}) }),
        // For a refused change's message: the payout's status, read again after the refusal.
        object: { kind: 'payout', read: () => api.payouts.retrieve(toUpstreamId(id)) },
      }, async () => {
        const payoutId = toUpstreamId(id);
        const given = updateArgument(changes, input);
        const params = given.changes ? await payoutChanges(given.changes, payoutId, loaders) : await payoutParams(given.input);
        const updated = await api.payouts.update(payoutId, params, await call.options());
        await forgetWritten({ loaders, entityCache }, 'payout', [updated]);
        return updated;
      }),
    ),

    startPayouts: idempotent((_, { payouts }, context, call) => startPayouts(payouts, context, call)),
  },

  Payout: {
    __resolveReference: (ref, { loaders }) => loaders.payout.load(toUpstreamId(ref.id)),
    id: (p) => p.id,
    status: (p, _, context) => statusFromUpstream('Payout', p.status, context),
    customer: (p, _, { loaders }, info) =>
      customerRelation(p.customer_id, info, loaders),
    currency: (p, _, { loaders }, info) =>
      currencyRelation(p.currency_id, info, loaders),
    ...paymentFields<PayoutModel>(),
    statusHistory: async (p, _, { loaders }) => buildTimeline('payout', p, await loaders.payoutEvents.load(p.id)),
    ...renamed<PayoutModel>()('scheduled_at', 'sent_at', 'failed_at'),
  },

  PayoutStatusHistoryEntry: {
    status: (e, _, context) => statusFromUpstream('Payout', e.status, context),
  },
} satisfies Resolvers;
