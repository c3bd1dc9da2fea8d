/**
 * Customers: create, read, update, soft delete, list, search. Responses embed
 * the phone number (`phone_number: {id, number, country}`) besides `phone_number_id`.
 * Search: `email` (exact, case-insensitive), `q` (free text over names and
 * e-mail), `created_after` / `created_before`.
 */
import type { Engine } from '../engine.js';
import { FieldErrors } from '../errors.js';
import { ok, created, type ApiRouter, type RequestContext } from '../http/types.js';
import { filterParam, matchesCommon } from '../query.js';
import type { CustomerRow, PhoneNumberRow } from '../store.js';
import { isObject, readEmail, readPhone, readString, type PhoneInput } from '../validate.js';
import { addCrudRoutes, getRoute, insertCreated, listRoute, removeRoute, updateTarget } from './common.js';

export interface CustomerInput {
  firstname: string;
  lastname: string;
  email: string;
  phone: PhoneInput | undefined;
}

function newPhone(engine: Engine, accountId: number, phone: PhoneInput): PhoneNumberRow {
  const now = engine.now();
  return engine.phoneNumbers.insert({
    id: engine.nextId('phone_number'),
    account_id: accountId,
    number: phone.number,
    country: phone.country,
    created_at: now,
    updated_at: now,
  });
}

export function createCustomer(engine: Engine, accountId: number, input: CustomerInput): CustomerRow {
  const now = engine.now();
  const phone = input.phone ? newPhone(engine, accountId, input.phone) : null;
  return insertCreated(engine, 'customers', 'customer', {
    id: engine.nextId('customer'),
    account_id: accountId,
    firstname: input.firstname,
    lastname: input.lastname,
    full_name: `${input.firstname} ${input.lastname}`,
    email: input.email,
    phone_number_id: phone?.id ?? null,
    phone_number: phone,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  });
}

/** Reads `{firstname, lastname, email, phone_number}`; all three names required when `required`. */
export function readCustomerInput(body: unknown, errs: FieldErrors, prefix: string, required: boolean): Partial<CustomerInput> {
  const b = isObject(body) ? body : {};
  const p = prefix === '' ? '' : `${prefix}.`;
  return {
    firstname: readString(b.firstname, errs, `${p}firstname`, { required, max: 200 }),
    lastname: readString(b.lastname, errs, `${p}lastname`, { required, max: 200 }),
    email: readEmail(b.email, errs, `${p}email`, required),
    phone: readPhone(b.phone_number, errs, `${p}phone_number`),
  };
}

function create(ctx: RequestContext) {
  const errs = new FieldErrors();
  if (!isObject(ctx.body)) errs.add('body', 'the body must be an object');
  const input = readCustomerInput(ctx.body, errs, '', true);
  errs.throwIfAny('Customer creation failed');
  const row = createCustomer(ctx.engine, ctx.account.id, input as CustomerInput);
  return created(ctx.engine.render.one('customer', row));
}

function update(ctx: RequestContext) {
  const { engine, account } = ctx;
  const { row, errs } = updateTarget(ctx, 'customers', 'Customer');
  const input = readCustomerInput(ctx.body, errs, '', false);
  if (isObject(ctx.body) && (ctx.body.firstname === '' || ctx.body.lastname === '' || ctx.body.email === '')) {
    for (const f of ['firstname', 'lastname', 'email'] as const) if (ctx.body[f] === '') errs.add(f, `${f} cannot be empty`);
  }
  errs.throwIfAny('Customer update failed');
  if (input.firstname) row.firstname = input.firstname;
  if (input.lastname) row.lastname = input.lastname;
  if (input.email) row.email = input.email;
  if (input.phone) {
    const phone = newPhone(engine, account.id, input.phone);
    row.phone_number = phone;
    row.phone_number_id = phone.id;
  }
  row.full_name = `${row.firstname} ${row.lastname}`;
  row.updated_at = engine.now();
  engine.recordEvent(account.id, 'customer.updated', 'customer', row);
  return ok(engine.render.one('customer', row));
}

const remove = removeRoute('customer', 'customers', 'Customer');

const list = listRoute(
  'customer',
  'customers',
  (q, ctx) => {
    const emailRaw = filterParam(ctx.query, 'email');
    const textRaw = filterParam(ctx.query, 'q');
    const email = typeof emailRaw === 'string' && emailRaw !== '' ? emailRaw.toLowerCase() : undefined;
    const text = typeof textRaw === 'string' && textRaw.trim() !== '' ? textRaw.trim().toLowerCase() : undefined;
    return (c) =>
      c.deleted_at === null &&
      matchesCommon({ created_at: c.created_at }, { ...q, status: undefined, customerId: undefined }) &&
      (email === undefined || c.email === email) &&
      (text === undefined || `${c.firstname} ${c.lastname} ${c.email}`.toLowerCase().includes(text));
  },
  'Invalid search parameters',
);

export function registerCustomers(router: ApiRouter): void {
  addCrudRoutes(router, '/v1/customers', { create, list, read: getRoute('customer', 'customers', 'Customer'), update, remove });
}
