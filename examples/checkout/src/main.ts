/**
 * The checkout: create a transaction, subscribe to it, send the payment
 * request to the payer's phone, and show each status as it arrives. On the
 * sandbox, 64000001 approves, 64000002 declines, 64000003 never answers.
 */
import { GraphQLRequestError, request, subscribe } from './client.js';
import { CheckoutStatus, CreateCheckout, PayWithPhone } from './operations.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const form = $<HTMLFormElement>('checkout');
const status = $<HTMLParagraphElement>('status');
const history = $<HTMLOListElement>('history');
const reason = $<HTMLParagraphElement>('reason');
let stop: (() => void) | null = null;

function show(text: string, tone: 'waiting' | 'ok' | 'bad' = 'waiting'): void {
  status.textContent = text;
  status.dataset.tone = tone;
}

/** What the payer or their operator gave as the reason of a decline, in words where it is a known code. */
const REASONS: Record<string, string> = {
  INSUFFICIENT_FUNDS: "the payer's balance is too low",
};

function explain(code: string | null | undefined): void {
  reason.textContent = code ? `Reason: ${REASONS[code] ? `${REASONS[code]} (${code})` : code}` : '';
}

function record(state: string): void {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${state}`;
  history.append(item);
}

const FINAL: Record<string, 'ok' | 'bad'> = { APPROVED: 'ok', TRANSFERRED: 'ok', DECLINED: 'bad', CANCELED: 'bad', EXPIRED: 'bad' };

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void pay(new FormData(form));
});

async function pay(fields: FormData): Promise<void> {
  stop?.();
  history.replaceChildren();
  explain(null);
  const button = form.querySelector('button')!;
  button.disabled = true;
  try {
    show('Creating the payment...');
    // One key per attempt: a retried click never creates a second transaction.
    const attempt = crypto.randomUUID();
    const created = await request(CreateCheckout, {
      input: {
        amountDecimal: String(fields.get('amount')),
        currency: { iso: 'XOF' },
        description: String(fields.get('description')),
        customer: { firstname: String(fields.get('firstname')), lastname: String(fields.get('lastname')), email: String(fields.get('email')) },
      },
      idempotencyKey: `create-${attempt}`,
    });
    const refused = created.createTransaction.userErrors[0];
    const transaction = created.createTransaction.transaction;
    if (refused || !transaction) throw new GraphQLRequestError(refused ? `${refused.field?.join('.') ?? 'input'}: ${refused.message}` : 'no transaction');
    record(`created: ${transaction.status}`);

    const settled = new Promise<string>((resolve, reject) => {
      stop = subscribe(CheckoutStatus, { id: transaction.id }, ({ transactionUpdated }) => {
        record(`update: ${transactionUpdated.status}`);
        const tone = FINAL[transactionUpdated.status];
        show(transactionUpdated.status, tone ?? 'waiting');
        if (tone === 'bad') explain(transactionUpdated.lastErrorCode);
        if (tone) resolve(transactionUpdated.status);
      }, reject);
    });

    show('Waiting for the payer to confirm on their phone...');
    const sent = await request(PayWithPhone, {
      id: transaction.id,
      mode: String(fields.get('mode')),
      phone: { number: String(fields.get('phone')), country: 'BJ' },
      idempotencyKey: `send-${attempt}`,
    });
    const sendRefused = sent.sendTransaction.userErrors[0];
    if (sendRefused) throw new GraphQLRequestError(sendRefused.message);
    await settled;
  } catch (error) {
    show(error instanceof Error ? error.message : String(error), 'bad');
  } finally {
    stop?.();
    stop = null;
    button.disabled = false;
  }
}
