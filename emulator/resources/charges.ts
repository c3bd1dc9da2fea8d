/**
 * What a transaction and a payout have in common on the way in: the currency,
 * the customer (existing or to create), the mode, the fields of a create
 * body both read the same way, and the fields a new row of either gets.
 */
import type { Engine } from '../engine.js';
import type { FieldErrors } from '../errors.js';
import { computeFees, MODES } from '../lifecycle.js';
import type { CurrencyRow, CustomerRow, JsonObject } from '../store.js';
import { isObject, readAmount, readId, readMetadata, readObject, readString } from '../validate.js';
import { createCustomer, readCustomerInput, type CustomerInput } from './customers.js';

/** `currency: {iso}` (or `{id}`) of the account; records a field error otherwise. */
export function readCurrency(engine: Engine, accountId: number, v: unknown, errs: FieldErrors, required: boolean): CurrencyRow | undefined {
  const obj = readObject(v, errs, 'currency', required);
  if (!obj) return undefined;
  if (obj.iso !== undefined) {
    const iso = readString(obj.iso, errs, 'currency.iso', { required: true, max: 3 });
    if (iso === undefined) return undefined;
    const currency = engine.currencyByIso(accountId, iso);
    if (!currency) errs.add('currency.iso', `unknown currency iso "${iso}"`);
    return currency;
  }
  if (obj.id !== undefined) {
    const id = readId(obj.id, errs, 'currency.id', true);
    const currency = id === undefined ? undefined : engine.currencies.find(accountId, id);
    if (id !== undefined && !currency) errs.add('currency.id', `unknown currency id ${id}`);
    return currency;
  }
  errs.add('currency.iso', 'currency.iso is required');
  return undefined;
}

export type CustomerRef = { existing: CustomerRow } | { create: CustomerInput } | undefined;

/** `customer: {id}` of the account, or `{firstname, lastname, email, phone_number}` to create (or reuse by e-mail). */
export function readCustomerRef(engine: Engine, accountId: number, v: unknown, errs: FieldErrors): CustomerRef {
  const obj = readObject(v, errs, 'customer');
  if (!obj) return undefined;
  if (obj.id !== undefined && obj.id !== '') {
    const id = readId(obj.id, errs, 'customer.id', true);
    if (id === undefined) return undefined;
    const existing = engine.customers.find(accountId, id);
    if (!existing || existing.deleted_at !== null) {
      errs.add('customer.id', `no customer with id ${id}`);
      return undefined;
    }
    return { existing };
  }
  const input = readCustomerInput(obj, errs, 'customer', true);
  if (!input.firstname || !input.lastname || !input.email) return undefined;
  const existing = engine.customers.all(accountId).find((c) => c.email === input.email && c.deleted_at === null);
  return existing ? { existing } : { create: input as CustomerInput };
}

export function resolveCustomer(engine: Engine, accountId: number, ref: CustomerRef): CustomerRow | undefined {
  if (ref === undefined) return undefined;
  return 'existing' in ref ? ref.existing : createCustomer(engine, accountId, ref.create);
}

export function readMode(v: unknown, errs: FieldErrors, currency: CurrencyRow | undefined, field = 'mode'): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !(MODES as readonly string[]).includes(v)) {
    errs.add(field, `unknown mode "${String(v)}"; known modes: ${MODES.join(', ')}`);
    return undefined;
  }
  if (currency && !currency.modes.includes(v)) {
    errs.add(field, `mode "${v}" is not available for ${currency.iso}`);
    return undefined;
  }
  return v;
}

/**
 * The fields of a create body that transactions and payouts share (amount and
 * currency required), read into `errs`; `body` is the body as an object.
 */
export function readNewCharge(engine: Engine, accountId: number, rawBody: unknown, errs: FieldErrors) {
  const body = isObject(rawBody) ? rawBody : {};
  if (!isObject(rawBody)) errs.add('body', 'the body must be an object');
  const currency = readCurrency(engine, accountId, body.currency, errs, true);
  return {
    body,
    amount: readAmount(body.amount, errs, 'amount', true),
    currency,
    customerRef: readCustomerRef(engine, accountId, body.customer, errs),
    mode: readMode(body.mode, errs, currency),
    merchantReference: readString(body.merchant_reference, errs, 'merchant_reference', { max: 200 }),
    customMetadata: readMetadata(body.custom_metadata, errs, 'custom_metadata'),
    metadata: readMetadata(body.metadata, errs, 'metadata'),
  };
}

/** What a create gives a transaction and a payout alike, once read and checked. */
export interface ChargeInput {
  amount: number;
  currency: CurrencyRow;
  mode?: string | undefined;
  merchantReference?: string | undefined;
  customMetadata?: JsonObject | undefined;
  metadata?: JsonObject | undefined;
}

/**
 * The fields a new transaction or payout gets alike: pending, with a fresh id,
 * reference and key, its fees (the payer bears them on a collection, the
 * merchant on a payout), and none of its status dates yet.
 */
export function newChargeFields(engine: Engine, kind: 'transaction' | 'payout', accountId: number, balanceId: number, input: ChargeInput) {
  const now = engine.now();
  return {
    id: engine.nextId(kind),
    account_id: accountId,
    reference: engine.randomKey(kind === 'transaction' ? 'trx_' : 'pyt_', 8),
    amount: input.amount,
    status: 'pending',
    currency_id: input.currency.id,
    mode: input.mode ?? null,
    last_error_code: null,
    ...computeFees(input.amount, kind === 'transaction' ? 'collection' : 'payout'),
    created_at: now,
    updated_at: now,
    deleted_at: null,
    metadata: input.metadata ?? {},
    custom_metadata: input.customMetadata ?? {},
    payment_method_id: null,
    transaction_key: engine.randomKey('', 16),
    merchant_reference: input.merchantReference ?? null,
    balance_id: balanceId,
  };
}
