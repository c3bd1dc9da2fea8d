/**
 * Payouts (disbursements): create `pending`, update while pending, start
 * several at once with `PUT /v1/payouts/start` (a bare array, as the spec
 * shows, or `{payouts: [...]}` as client libraries send). A start item with a
 * future `scheduled_at` makes the payout `scheduled` until then; otherwise it is
 * `started` at once and, `settleMs` later, `sent` or `failed` by the sandbox
 * phone table.
 *
 * A start batch is all-or-nothing: when any item is invalid (unknown id, not
 * pending, duplicate, bad date, no phone number) the whole batch is refused
 * with a 422 naming each bad item as `payouts[<index>].<field>`, and no payout
 * changes. So nothing is lost: fix the item and send the batch again.
 */
import type { Engine } from '../engine.js';
import { ApiError, FieldErrors, invalidMove } from '../errors.js';
import { ok, created, type ApiRouter, type RequestContext } from '../http/types.js';
import { computeFees, DEFAULT_PAYOUT_MODE, MAX_START_BATCH, sandboxOutcome } from '../lifecycle.js';
import { matchesCommon } from '../query.js';
import type { CurrencyRow, PayoutRow } from '../store.js';
import { isObject, readAmount, readMetadata, readPhone, readTimestamp } from '../validate.js';
import { addCrudRoutes, getRoute, insertCreated, listRoute, removeRoute, updateTarget } from './common.js';
import { newChargeFields, readCurrency, readCustomerRef, readMode, readNewCharge, resolveCustomer, type ChargeInput } from './charges.js';

export function setPayoutStatus(engine: Engine, p: PayoutRow, status: string, errorCode: string | null = null): void {
  const now = engine.now();
  p.status = status;
  p.updated_at = now;
  if (status === 'started') p.started_at = now;
  if (status === 'sent') p.sent_at = now;
  if (status === 'failed') {
    p.failed_at = now;
    p.last_error_code = errorCode ?? 'FAILED';
  }
  // A final status ends whatever was still to happen to it (a scheduled start, an operator's answer).
  if (status === 'sent' || status === 'failed') engine.cancelPending(`payout:${p.id}`);
  engine.recordEvent(p.account_id, `payout.${status}`, 'payout', p);
}

function isCurrent(engine: Engine, p: PayoutRow): boolean {
  return p.deleted_at === null && engine.payouts.find(p.account_id, p.id) === p;
}

/** Hands the payout to the operator now; the phone table decides after settleMs. */
export function beginPayout(engine: Engine, p: PayoutRow, phoneNumber: string): void {
  setPayoutStatus(engine, p, 'started');
  engine.schedulePending(`payout:${p.id}`, engine.options.settleMs, () => {
    if (p.status !== 'started' || !isCurrent(engine, p)) return;
    const outcome = sandboxOutcome(phoneNumber);
    if (outcome.outcome === 'success') setPayoutStatus(engine, p, 'sent');
    else if (outcome.outcome === 'failure') setPayoutStatus(engine, p, 'failed', outcome.errorCode);
  });
}

export function schedulePayout(engine: Engine, p: PayoutRow, at: Date, phoneNumber: string): void {
  p.scheduled_at = at.toISOString();
  setPayoutStatus(engine, p, 'scheduled');
  engine.schedulePending(`payout:${p.id}`, at.getTime() - Date.now(), () => {
    if (p.status === 'scheduled' && isCurrent(engine, p)) beginPayout(engine, p, phoneNumber);
  });
}

export interface PayoutInput extends ChargeInput {
  customerId: number | null;
}

export function createPayout(engine: Engine, accountId: number, balanceId: number, input: PayoutInput): PayoutRow {
  return insertCreated(engine, 'payouts', 'payout', {
    ...newChargeFields(engine, 'payout', accountId, balanceId, input),
    customer_id: input.customerId,
    scheduled_at: null,
    started_at: null,
    sent_at: null,
    failed_at: null,
  });
}

function create(ctx: RequestContext) {
  const { engine, account } = ctx;
  const errs = new FieldErrors();
  const { amount, currency, customerRef, mode, merchantReference, customMetadata, metadata } = readNewCharge(engine, account.id, ctx.body, errs);
  errs.throwIfAny('Payout creation failed');
  const customer = resolveCustomer(engine, account.id, customerRef);
  const row = createPayout(engine, account.id, account.balance_id, {
    amount: amount as number,
    currency: currency as CurrencyRow,
    customerId: customer?.id ?? null,
    mode,
    merchantReference,
    customMetadata,
    metadata,
  });
  return created(engine.render.one('payout', row));
}

function update(ctx: RequestContext) {
  const { engine, account } = ctx;
  const { row: p, body: b, errs } = updateTarget(ctx, 'payouts', 'Payout');
  const amount = readAmount(b.amount, errs, 'amount', false);
  const currency = readCurrency(engine, account.id, b.currency, errs, false);
  const customerRef = readCustomerRef(engine, account.id, b.customer, errs);
  const mode = readMode(b.mode, errs, currency ?? engine.currencies.find(account.id, p.currency_id));
  const customMetadata = readMetadata(b.custom_metadata, errs, 'custom_metadata');
  errs.throwIfAny('Payout update failed');
  if (p.status !== 'pending') throw invalidMove('status', `a ${p.status} payout cannot be changed`);
  if (amount !== undefined) Object.assign(p, { amount }, computeFees(amount, 'payout'));
  if (currency) p.currency_id = currency.id;
  if (mode !== undefined) p.mode = mode;
  if (customMetadata !== undefined) p.custom_metadata = customMetadata;
  const customer = resolveCustomer(engine, account.id, customerRef);
  if (customer) p.customer_id = customer.id;
  p.updated_at = engine.now();
  engine.recordEvent(account.id, 'payout.updated', 'payout', p);
  return ok(engine.render.one('payout', p));
}

// A started payout is with the operator: deleting it then would lose the money's trace.
const remove = removeRoute('payout', 'payouts', 'Payout', (p, engine) => {
  if (p.status === 'started') throw invalidMove('status', 'a started payout is in flight and cannot be deleted');
  engine.cancelPending(`payout:${p.id}`);
});

function start(ctx: RequestContext) {
  const { engine, account } = ctx;
  const raw = Array.isArray(ctx.body) ? ctx.body : isObject(ctx.body) ? ctx.body.payouts : undefined;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new ApiError(422, 'Payout start failed', { payouts: ['a non-empty array of {id, scheduled_at?, phone_number?} is required'] });
  }
  if (raw.length > MAX_START_BATCH) {
    throw new ApiError(422, 'Payout start failed', { payouts: [`at most ${MAX_START_BATCH} payouts per start`] });
  }
  const errs = new FieldErrors();
  const seen = new Set<number>();
  const plan: { payout: PayoutRow; at: Date | undefined; phone: string }[] = [];
  raw.forEach((item: unknown, i) => {
    const f = `payouts[${i}]`;
    if (!isObject(item)) {
      errs.add(f, `${f} must be an object with an id`);
      return;
    }
    const idRaw = item.id;
    const id = typeof idRaw === 'number' ? idRaw : typeof idRaw === 'string' && /^\d+$/.test(idRaw) ? Number(idRaw) : undefined;
    const at = readTimestamp(item.scheduled_at, errs, `${f}.scheduled_at`);
    const phone = readPhone(item.phone_number, errs, `${f}.phone_number`);
    if (id === undefined) {
      errs.add(`${f}.id`, `${f}.id is required and must be an integer`);
      return;
    }
    const p = engine.payouts.find(account.id, id);
    if (!p || p.deleted_at !== null) {
      errs.add(`${f}.id`, `payout ${id} not found`);
      return;
    }
    if (seen.has(id)) {
      errs.add(`${f}.id`, `payout ${id} appears twice in the batch`);
      return;
    }
    seen.add(id);
    if (p.status !== 'pending') errs.add(`${f}.id`, `payout ${id} is ${p.status}; only pending payouts can start`);
    const customer = p.customer_id === null ? undefined : engine.customers.find(account.id, p.customer_id);
    const number = phone?.number ?? customer?.phone_number?.number;
    if (number === undefined && item.phone_number === undefined) {
      errs.add(`${f}.phone_number`, `payout ${id} has no customer phone number; give phone_number`);
    }
    if (number !== undefined) plan.push({ payout: p, at, phone: number });
  });
  errs.throwIfAny('Payout start failed: the whole batch was refused and no payout changed');
  const now = Date.now();
  for (const { payout, at, phone } of plan) {
    payout.mode ??= DEFAULT_PAYOUT_MODE;
    payout.payment_method_id = engine.nextId('payment_method');
    if (at && at.getTime() > now) schedulePayout(engine, payout, at, phone);
    else beginPayout(engine, payout, phone);
  }
  return ok(engine.render.many('payout', plan.map((x) => x.payout)));
}

const list = listRoute('payout', 'payouts', (q) => (p) => p.deleted_at === null && matchesCommon(p, q), 'Invalid search parameters');

export function registerPayouts(router: ApiRouter): void {
  addCrudRoutes(router, '/v1/payouts', { create, list, read: getRoute('payout', 'payouts', 'Payout'), update, remove }).add('PUT', '/v1/payouts/start', start);
}
