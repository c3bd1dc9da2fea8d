/**
 * The checkout: check the form, create a transaction, subscribe to it, send
 * the payment request to the payer's phone, and say each status as it
 * arrives. On the sandbox, 64000001 approves, 64000002 declines (balance too
 * low), 64000003 never answers, 64000004 has no mobile-money account.
 */
import { checkOrder, type Order } from './checks.js';
import { GatewayError, request, SANDBOX, subscribe } from './client.js';
import { CheckoutStatus, CreateCheckout, PayWithPhone } from './operations.js';
import { declineReason, failureWords, finalWords, refusedWords, STILL_WAITING, waitingWords, type Tone } from './words.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const form = $<HTMLFormElement>('checkout');
const status = $<HTMLParagraphElement>('status');
const history = $<HTMLOListElement>('history');
const reason = $<HTMLParagraphElement>('reason');
let stop: (() => void) | null = null;

/** A silent payer for this long gets a word that nothing is charged meanwhile. */
const STILL_WAITING_AFTER_MS = 20_000;

function show(text: string, tone: Tone = 'waiting', code = ''): void {
  status.textContent = text;
  status.dataset.tone = tone;
  status.dataset.status = code;
}

function explain(text: string): void {
  reason.textContent = text;
}

function record(state: string): void {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${state}`;
  history.append(item);
}

/** Each field's problem under it (or none), so the person sees what to fix where they type. */
function markFields(problems: Partial<Record<keyof Order, string>>): void {
  for (const input of form.querySelectorAll<HTMLInputElement>('input')) {
    const problem = problems[input.name as keyof Order];
    const note = document.getElementById(`${input.name}-problem`);
    if (note) note.textContent = problem ?? '';
    input.setAttribute('aria-invalid', problem ? 'true' : 'false');
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const checked = checkOrder(new FormData(form));
  markFields(checked.ok ? {} : checked.problems);
  if (!checked.ok) {
    stop?.();
    history.replaceChildren();
    explain('');
    const count = Object.keys(checked.problems).length;
    show(count === 1 ? 'Please correct the field marked below; nothing was sent.' : `Please correct the ${count} fields marked below; nothing was sent.`, 'bad');
    form.querySelector<HTMLInputElement>('[aria-invalid="true"]')?.focus();
    return;
  }
  void pay(checked.order);
});

async function pay(order: Order): Promise<void> {
  stop?.();
  history.replaceChildren();
  explain('');
  const button = form.querySelector('button')!;
  button.disabled = true;
  let stillWaiting: ReturnType<typeof setTimeout> | undefined;
  try {
    show('Creating the payment…');
    // One key per attempt: a retried click never creates a second transaction.
    const attempt = crypto.randomUUID();
    const created = await request(CreateCheckout, {
      input: {
        amountDecimal: order.amount,
        currency: { iso: 'XOF' },
        description: order.description,
        customer: { firstname: order.firstname, lastname: order.lastname, email: order.email },
      },
      idempotencyKey: `create-${attempt}`,
    });
    const refused = created.createTransaction.userErrors[0];
    const transaction = created.createTransaction.transaction;
    if (refused) return void show(refusedWords(refused.field, refused.code), 'bad');
    if (!transaction) throw new GatewayError('ERROR', 'no transaction created');
    const amount = transaction.amountMoney ? `${transaction.amountMoney.amount} ${transaction.amountMoney.currencyIso}` : `${order.amount} XOF`;
    record(`created: ${transaction.status}`);

    const settled = new Promise<void>((resolve, reject) => {
      stop = subscribe(CheckoutStatus, { id: transaction.id }, ({ transactionUpdated }) => {
        record(`update: ${transactionUpdated.status}`);
        const final = finalWords(transactionUpdated.status, amount);
        if (!final) return;
        show(final.text, final.tone, transactionUpdated.status);
        explain(transactionUpdated.status === 'DECLINED' ? declineReason(transactionUpdated.lastErrorCode) : '');
        resolve();
      }, reject);
    });
    // Awaited below; until then a socket failure must not go unhandled.
    settled.catch(() => undefined);

    const waiting = waitingWords(order.phone, SANDBOX);
    show(waiting.text, 'waiting', 'PENDING');
    const sent = await request(PayWithPhone, {
      id: transaction.id,
      mode: order.mode,
      phone: { number: order.phone, country: 'BJ' },
      idempotencyKey: `send-${attempt}`,
    });
    const sendRefused = sent.sendTransaction.userErrors[0];
    if (sendRefused) return void show(refusedWords(sendRefused.field, sendRefused.code), 'bad');
    // The payment may have settled while the send was answered: then its words stay.
    if (status.dataset.status === 'PENDING') {
      explain(waiting.hint);
      stillWaiting = setTimeout(() => status.dataset.status === 'PENDING' && !waiting.hint && explain(STILL_WAITING), STILL_WAITING_AFTER_MS);
    }
    await settled;
  } catch (error) {
    show(failureWords(error), 'bad');
  } finally {
    clearTimeout(stillWaiting);
    stop?.();
    stop = null;
    button.disabled = false;
  }
}
