/**
 * `startPayouts`, safe to repeat: the upstream refuses a batch holding a payout
 * that is not pending, so the payouts are read first and only pending ones sent.
 */
import type { StartPayoutInput } from '../__generated__/resolvers-types.js';
import type { Context } from '../context.js';
import { UserErrorCode, UserInputError, type UserError } from '../errors.js';
import type { IdempotentCall } from '../idempotency/index.js';
import { startTransition } from '../payments/rules.js';
import type { PayoutModel } from '../upstream/index.js';
import { phoneChecks, phoneNumber } from './inputs.js';
import { checkInput, forgetWritten, isoString, toUpstreamId, withUserErrors } from './support.js';

/** Only pending payouts are sent, so the upstream's item k is the caller's item `sent[k]`. */
function callerField(sent: readonly number[]) {
  return (parts: string[]): string[] | null => {
    const [list, index, ...rest] = parts;
    if (list !== 'payouts') return null;
    if (index === undefined) return ['payouts'];
    const item = /^\d+$/.test(index) ? sent[Number(index)] : undefined;
    return item === undefined ? ['payouts'] : ['payouts', String(item), ...rest];
  };
}

/** Each is read first, one call apiece: a longer batch is refused before spending the upstream budget. */
export const MAX_PAYOUTS_PER_START = 100;

export function startPayouts(payouts: StartPayoutInput[], { api, loaders, entityCache }: Context, call: IdempotentCall) {
  const pending: number[] = [];
  return withUserErrors(
    { root: null, idField: null, mapField: callerField(pending) },
    async () => {
      checkInput([
        [payouts.length > 0, ['payouts'], 'Give at least one payout to start.'],
        [payouts.length <= MAX_PAYOUTS_PER_START, ['payouts'], `At most ${MAX_PAYOUTS_PER_START} payouts per start (${payouts.length} given): split the batch.`],
      ]);
      checkInput(payouts.flatMap((p, i) => phoneChecks(p.phoneNumber, ['payouts', String(i), 'phoneNumber'])));
      const ids = payouts.map((p, i) => toUpstreamId(p.id, `payouts.${i}.id`));
      // One payout twice in a batch is a mistake the upstream answers unpredictably: refuse it here.
      checkInput(ids.map((id, i): [boolean, string[], string] => [ids.indexOf(id) === i, ['payouts', String(i), 'id'], `Payout ${id} is already in this batch (item ${ids.indexOf(id)}).`]));
      const current = await loaders.payout.loadMany(ids);
      const userErrors: UserError[] = [];
      current.forEach((payout, i) => {
        if (payout instanceof Error) throw payout;
        const field = ['payouts', String(i), 'id'];
        if (payout === null) {
          userErrors.push({ field, message: 'No such payout in this account.', code: UserErrorCode.NotFound });
          return;
        }
        const transition = startTransition(payout.status);
        if (transition === 'apply') pending.push(i);
        if (transition === 'conflict') {
          userErrors.push({
            field,
            message: `Payout ${payout.id} is ${payout.status.toLowerCase()}; only a pending payout can be started.`,
            code: UserErrorCode.InvalidState,
          });
        }
      });
      if (userErrors.length > 0) throw new UserInputError(userErrors);
      const started =
        pending.length === 0
          ? []
          : await api.payouts.start(
              pending.map((i) => ({
                id: ids[i] as number,
                scheduledAt: isoString(payouts[i]?.scheduledAt),
                phoneNumber: phoneNumber(payouts[i]?.phoneNumber),
              })),
              await call.options(),
            );
      await forgetWritten({ loaders, entityCache }, 'payout', started);
      const byId = new Map<number, PayoutModel>(started.map((p) => [p.id, p]));
      const result = ids.map((id, i) => byId.get(id) ?? (current[i] as PayoutModel));
      return { payouts: result, userErrors: [] };
    },
    (userErrors) => ({ payouts: [], userErrors }),
  );
}
