/**
 * What the page says, for a person: each status and decline reason, the
 * sandbox numbers that behave on purpose, and every failure. Codes from the
 * gateway or the operator are looked up here and never shown as they came.
 */
import { GatewayError } from './client.js';

export type Tone = 'waiting' | 'ok' | 'bad';

/** A final status in words, with its tone; a status not listed here is still waiting. */
export function finalWords(status: string, amount: string): { text: string; tone: Tone } | null {
  switch (status) {
    case 'APPROVED':
      return { text: `Paid: the payer approved ${amount}.`, tone: 'ok' };
    case 'TRANSFERRED':
      return { text: `Paid: ${amount} approved and transferred to your account.`, tone: 'ok' };
    case 'DECLINED':
      return { text: 'Declined: the payment did not go through, and nothing was charged.', tone: 'bad' };
    case 'CANCELED':
      return { text: 'Canceled: the payment was stopped before it was paid, and nothing was charged.', tone: 'bad' };
    case 'EXPIRED':
      return { text: 'Expired: the payer did not confirm in time, and nothing was charged. Try again.', tone: 'bad' };
    case 'REFUNDED':
    case 'APPROVED_PARTIALLY_REFUNDED':
    case 'TRANSFERRED_PARTIALLY_REFUNDED':
      return { text: 'Paid, then refunded.', tone: 'bad' };
    default:
      return null;
  }
}

/** Why a payment was declined, from its `lastErrorCode`. */
const REASONS: Record<string, string> = {
  INSUFFICIENT_FUNDS: "The payer's mobile-money balance is too low. They can top up and pay again.",
  ACCOUNT_NOT_FOUND: 'There is no mobile-money account for this phone number with this operator. Check the number and the operator, then try again.',
};

export function declineReason(code: string | null | undefined): string {
  return (code && REASONS[code]) ?? 'The operator gave no reason this page knows. The payer can try again, or with another number.';
}

/** Said while the payer has not answered; on the sandbox, 64000003 never answers on purpose. */
export function waitingWords(phone: string, sandbox: boolean): { text: string; hint: string } {
  const text = "Waiting for the payer to confirm on their phone…";
  if (sandbox && lastEight(phone) === '64000003') {
    return {
      text,
      hint:
        'Sandbox: 64000003 never answers, so this payment stays pending and will not settle by itself. ' +
        'Settle it by hand in the emulator console (open the Console address that npm start printed, then Approve or Decline it there): this page shows the outcome.',
    };
  }
  return { text, hint: '' };
}

/** Said when the payer has been silent this long: a real phone may never answer either. */
export const STILL_WAITING =
  'Still no answer from the payer. The payment stays pending until they confirm on their phone; nothing is charged before that.';

function lastEight(phone: string): string {
  return phone.replace(/\D/g, '').slice(-8);
}

/** A field the gateway refused (a user error), in words. */
export function refusedWords(field: readonly string[] | null | undefined, code: string): string {
  const name = field?.join('.') ?? '';
  if (code === 'INVALID_STATE') return 'This payment can no longer be paid: it was settled already. Start a new one.';
  if (name.includes('amount')) return 'The amount was not accepted. Enter it in whole CFA francs, above zero.';
  if (name.includes('phone')) return 'The phone number was not accepted. Check the number and the operator, then try again.';
  if (name.includes('email')) return 'The e-mail address was not accepted. Check it and try again.';
  if (name.includes('mode')) return 'This operator cannot take this payment. Choose another operator.';
  return 'Some details were not accepted. Check them and try again.';
}

/** Any failure, in words; the raw text goes to the developer's console instead. */
export function failureWords(error: unknown): string {
  if (error instanceof GatewayError) {
    console.info(`checkout: ${error.code}: ${error.detail}`);
    switch (error.code) {
      case 'UNREACHABLE':
        return 'The payment service cannot be reached. Check that the gateway is running (npm start), then try again.';
      case 'UPSTREAM_UNAVAILABLE':
      case 'UPSTREAM_TIMEOUT':
      case 'UPSTREAM_ERROR':
        return 'The mobile-money provider is not answering right now. Nothing was charged; try again in a moment.';
      case 'RATE_LIMITED':
        return 'Too many attempts in a short time. Wait a few seconds, then try again.';
      case 'UNAUTHENTICATED':
      case 'FORBIDDEN':
        return "This checkout's payments key was refused. Check VITE_PAYMENTS_KEY (a sk_sandbox_ key against the emulator).";
      case 'BAD_USER_INPUT':
        return 'Some details were not accepted. Check the amount and the phone number, then try again.';
      default:
        return 'The payment could not be completed, and nothing was charged. Try again in a moment.';
    }
  }
  console.info('checkout:', error);
  return 'Something went wrong on this page, and nothing was charged. Reload it and try again.';
}
