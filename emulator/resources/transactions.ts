/**
 * Transactions (collections): create `pending`; `POST /{id}/token` gives a
 * per-transaction token and a hosted-checkout url; `POST /v1/transactions/{mode}`
 * (or the older `POST /v1/{mode}`) sends the payment request to the payer's
 * phone, and after `settleMs` the sandbox phone table decides the outcome.
 * A caller may move the status with `PUT` as TRANSACTION_MOVES allows; any
 * other move is a 409 and changes nothing.
 */
import type { Engine } from '../engine.js';
import { ApiError, FieldErrors, invalidMove } from '../errors.js';
import { ok, created, type ApiRouter, type RequestContext } from '../http/types.js';
import {
  canMoveTransaction,
  computeFees,
  MODES,
  sandboxOutcome,
  TRANSACTION_MOVES,
  TRANSACTION_STATUS_AT,
  TRANSACTION_STATUSES,
} from '../lifecycle.js';
import { matchesCommon } from '../query.js';
import type { CurrencyRow, CustomerRow, TransactionRow } from '../store.js';
import { isObject, readAmount, readMetadata, readPhone, readString, readUrl } from '../validate.js';
import { addCrudRoutes, findLiveOr404, getRoute, insertCreated, listRoute, removeRoute, updateTarget } from './common.js';
import { newChargeFields, readNewCharge, resolveCustomer, type ChargeInput } from './charges.js';

export interface TransactionInput extends ChargeInput {
  description?: string | undefined;
  callbackUrl?: string | undefined;
  customer?: CustomerRow | undefined;
}

export function createTransaction(engine: Engine, accountId: number, balanceId: number, input: TransactionInput): TransactionRow {
  return insertCreated(engine, 'transactions', 'transaction', {
    ...newChargeFields(engine, 'transaction', accountId, balanceId, input),
    description: input.description ?? null,
    callback_url: input.callbackUrl ?? null,
    customer_id: input.customer?.id ?? null,
    approved_at: null,
    canceled_at: null,
    declined_at: null,
    refunded_at: null,
    transferred_at: null,
    receipt_url: null,
    sub_accounts_commissions: [],
  });
}

/** Moves the status, stamps `<status>_at`, records `transaction.<status>`. The caller checked the move. */
export function setTransactionStatus(engine: Engine, tx: TransactionRow, status: string, errorCode: string | null = null): void {
  const now = engine.now();
  tx.status = status;
  tx.updated_at = now;
  const at = TRANSACTION_STATUS_AT[status];
  if (at) (tx as unknown as Record<string, unknown>)[at] = now;
  if (status === 'declined') tx.last_error_code = errorCode ?? 'DECLINED';
  if (status === 'approved') tx.receipt_url = `${engine.baseUrl}/receipts/${tx.reference}`;
  if (status !== 'pending') engine.cancelPending(`transaction:${tx.id}`);
  engine.recordEvent(tx.account_id, `transaction.${status}`, 'transaction', tx);
}

/** What the payer's phone does, `settleMs` after the send. */
export function scheduleSettlement(engine: Engine, tx: TransactionRow, phoneNumber: string, ms: number): void {
  const sentWith = tx.payment_method_id;
  engine.schedulePending(`transaction:${tx.id}`, ms, () => {
    if (tx.status !== 'pending' || tx.deleted_at !== null || tx.payment_method_id !== sentWith) return;
    if (engine.transactions.find(tx.account_id, tx.id) !== tx) return;
    const outcome = sandboxOutcome(phoneNumber);
    if (outcome.outcome === 'success') setTransactionStatus(engine, tx, 'approved');
    else if (outcome.outcome === 'failure') setTransactionStatus(engine, tx, 'declined', outcome.errorCode);
  });
}

function create(ctx: RequestContext) {
  const { engine, account } = ctx;
  const errs = new FieldErrors();
  const { body, amount, currency, customerRef, ...charge } = readNewCharge(engine, account.id, ctx.body, errs);
  const description = readString(body.description, errs, 'description', { max: 1000 });
  const callbackUrl = readUrl(body.callback_url, errs, 'callback_url', false);
  errs.throwIfAny('Transaction creation failed');
  const row = createTransaction(engine, account.id, account.balance_id, {
    ...charge,
    amount: amount as number,
    currency: currency as CurrencyRow,
    description,
    callbackUrl,
    customer: resolveCustomer(engine, account.id, customerRef),
  });
  return created(engine.render.one('transaction', row));
}

function update(ctx: RequestContext) {
  const { engine, account } = ctx;
  const { row: tx, body: b, errs } = updateTarget(ctx, 'transactions', 'Transaction');
  const amount = readAmount(b.amount, errs, 'amount', false);
  const description = readString(b.description, errs, 'description', { max: 1000 });
  const callbackUrl = readUrl(b.callback_url, errs, 'callback_url', false);
  const customMetadata = readMetadata(b.custom_metadata, errs, 'custom_metadata');
  const status = readString(b.status, errs, 'status', { max: 50 });
  if (status !== undefined && !TRANSACTION_STATUSES.includes(status)) {
    errs.add('status', `unknown status "${status}"; known: ${TRANSACTION_STATUSES.join(', ')}`);
  }
  errs.throwIfAny('Transaction update failed');
  const moving = status !== undefined && status !== tx.status;
  if (moving && !canMoveTransaction(tx.status, status)) {
    const allowed = TRANSACTION_MOVES[tx.status] ?? [];
    throw invalidMove('status', `a ${tx.status} transaction cannot become ${status} (allowed: ${allowed.join(', ') || 'none'})`);
  }
  if (amount !== undefined && amount !== tx.amount && tx.status !== 'pending') {
    throw invalidMove('amount', `the amount of a ${tx.status} transaction cannot change`);
  }
  let changed = false;
  if (amount !== undefined && amount !== tx.amount) {
    Object.assign(tx, { amount }, computeFees(amount, 'collection'));
    changed = true;
  }
  if (description !== undefined && description !== tx.description) {
    tx.description = description;
    changed = true;
  }
  if (callbackUrl !== undefined && callbackUrl !== tx.callback_url) {
    tx.callback_url = callbackUrl;
    changed = true;
  }
  if (customMetadata !== undefined) {
    tx.custom_metadata = customMetadata;
    changed = true;
  }
  if (changed) {
    tx.updated_at = engine.now();
    engine.recordEvent(account.id, 'transaction.updated', 'transaction', tx);
  }
  if (moving) setTransactionStatus(engine, tx, status);
  // The update response has no `mode` (spec, Transaction table).
  const { mode: _mode, ...withoutMode } = tx;
  return ok(engine.render.one('transaction', withoutMode));
}

const remove = removeRoute('transaction', 'transactions', 'Transaction', (tx, engine) => engine.cancelPending(`transaction:${tx.id}`));

function token(ctx: RequestContext) {
  const { engine, account } = ctx;
  const tx = findLiveOr404(engine.transactions, account.id, ctx.params.id, 'Transaction');
  if (tx.status !== 'pending') throw invalidMove('status', `a ${tx.status} transaction cannot be paid`);
  let t = engine.tokenOf.get(tx.id);
  if (t === undefined) {
    t = engine.randomKey('tok_', 24);
    engine.tokens.set(t, tx.id);
    engine.tokenOf.set(tx.id, t);
  }
  // Always flat, in both styles (docs/upstream.md, Response shapes).
  return ok({ token: t, url: `${engine.baseUrl}/checkout/${t}` });
}

function send(ctx: RequestContext) {
  const { engine, account } = ctx;
  const errs = new FieldErrors();
  const b = isObject(ctx.body) ? ctx.body : {};
  const modeParam = ctx.params.mode ?? '';
  if (!(MODES as readonly string[]).includes(modeParam)) errs.add('mode', `unknown mode "${modeParam}"; known modes: ${MODES.join(', ')}`);
  const tokenValue = readString(b.token, errs, 'token', { required: true, max: 200 });
  const phone = readPhone(b.phone_number, errs, 'phone_number');
  let tx: TransactionRow | undefined;
  if (tokenValue !== undefined) {
    const id = engine.tokens.get(tokenValue);
    tx = id === undefined ? undefined : engine.transactions.find(account.id, id);
    if (!tx || tx.deleted_at !== null) errs.add('token', 'unknown or expired token');
  }
  errs.throwIfAny('Payment request failed');
  const transaction = tx as TransactionRow;
  const currency = engine.currencies.find(account.id, transaction.currency_id);
  if (currency && !currency.modes.includes(modeParam)) {
    throw new ApiError(422, 'Payment request failed', { mode: [`mode "${modeParam}" is not available for ${currency.iso}`] });
  }
  const customer = transaction.customer_id === null ? undefined : engine.customers.find(account.id, transaction.customer_id);
  const number = phone?.number ?? customer?.phone_number?.number;
  if (number === undefined) {
    throw new ApiError(422, 'Payment request failed', { phone_number: ['phone_number is required: the customer has none'] });
  }
  if (transaction.status !== 'pending') throw invalidMove('status', `a ${transaction.status} transaction cannot be paid`);
  const now = engine.now();
  transaction.mode = modeParam;
  transaction.payment_method_id = engine.nextId('payment_method');
  transaction.updated_at = now;
  engine.recordEvent(account.id, 'transaction.updated', 'transaction', transaction);
  scheduleSettlement(engine, transaction, number, engine.options.settleMs);
  const intent = {
    reference: transaction.reference,
    amount: transaction.amount,
    status: 'pending',
    currency_id: transaction.currency_id,
    mode: modeParam,
    last_error_code: null,
    created_at: now,
    updated_at: now,
    approved_at: null,
    canceled_at: null,
    deleted_at: null,
    payment_method_id: transaction.payment_method_id,
    transaction_key: transaction.transaction_key,
    account_id: account.id,
  };
  return ok(engine.render.many('payment_intent', [intent]));
}

const list = listRoute('transaction', 'transactions', (q) => (t) => t.deleted_at === null && matchesCommon(t, q), 'Invalid search parameters');

export function registerTransactions(router: ApiRouter): void {
  addCrudRoutes(router, '/v1/transactions', { create, list, read: getRoute('transaction', 'transactions', 'Transaction'), update, remove })
    .add('POST', '/v1/transactions/:id/token', token)
    .add('POST', '/v1/transactions/:mode', send)
    // Older path of the send step, still used by client libraries.
    .add('POST', '/v1/:mode', send);
}
