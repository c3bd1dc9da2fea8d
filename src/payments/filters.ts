/**
 * The list filters checked on each upstream row, since the upstream may ignore
 * them (docs/graphql-contract.md, Connections). A row is kept only when it
 * shows that it matches: one without the field a filter names is dropped.
 */
import type { Id } from '../upstream/index.js';
import type { CustomerModel, EventModel } from '../upstream/index.js';

/** Inclusive bounds, ISO 8601. */
export interface CreatedRange {
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
}

export interface PaymentFilter extends CreatedRange {
  /** Lower case, as sent upstream. */
  status?: string | undefined;
  customerId?: Id | undefined;
}

export interface CustomerFilter extends CreatedRange {
  email?: string | undefined;
  query?: string | undefined;
}

export interface EventFilter {
  type?: string | undefined;
  objectId?: Id | undefined;
}

/** `undefined`: no filter set. */
export type RowCheck<T> = ((row: T) => boolean) | undefined;

const isSet = (filter: object) => Object.values(filter).some((v) => v !== undefined);

export function paymentCheck(filter: PaymentFilter): RowCheck<{ status: string; customer_id?: Id | null | undefined; created_at?: string | null | undefined }> {
  if (!isSet(filter)) return undefined;
  const inRange = rangeCheck(filter);
  return (row) =>
    (filter.status === undefined || row.status.toLowerCase() === filter.status) &&
    (filter.customerId === undefined || row.customer_id === filter.customerId) &&
    inRange(row.created_at);
}

/** Free text is found in the first name, the last name, the e-mail, or "first last". */
export function customerCheck(filter: CustomerFilter): RowCheck<CustomerModel> {
  if (!isSet(filter)) return undefined;
  const email = filter.email?.toLowerCase();
  const text = filter.query?.trim().toLowerCase();
  const inRange = rangeCheck(filter);
  return (row) =>
    (email === undefined || row.email?.toLowerCase() === email) &&
    (!text || customerTexts(row).some((field) => field.includes(text))) &&
    inRange(row.created_at);
}

function customerTexts(row: CustomerModel): string[] {
  const [first, last, email] = [row.firstname, row.lastname, row.email].map((v) => (v ?? '').toLowerCase());
  return [first!, last!, email!, `${first} ${last}`];
}

/** The entity's id stands in when the upstream left `object_id` out. */
export function eventCheck(filter: EventFilter): RowCheck<EventModel> {
  if (!isSet(filter)) return undefined;
  return (row) =>
    (filter.type === undefined || row.type === filter.type) &&
    (filter.objectId === undefined || (row.object_id ?? row.entity?.id) === filter.objectId);
}

/** To the upstream's own precision, beyond the millisecond too. */
function rangeCheck({ createdAfter, createdBefore }: CreatedRange): (at: string | null | undefined) => boolean {
  if (createdAfter === undefined && createdBefore === undefined) return () => true;
  const from = createdAfter === undefined ? undefined : Date.parse(createdAfter);
  const to = createdBefore === undefined ? undefined : Date.parse(createdBefore);
  return (at) => {
    if (at === null || at === undefined) return false;
    const ms = Date.parse(at);
    if (Number.isNaN(ms)) return false;
    if (from !== undefined && ms < from) return false;
    // Date.parse stops at the millisecond: 12:00:00.0005 is after a bound of 12:00:00.000.
    if (to !== undefined && (ms > to || (ms === to && subMillisecond(at)))) return false;
    return true;
  };
}

function subMillisecond(at: string): boolean {
  const fraction = /\.(\d+)/.exec(at)?.[1] ?? '';
  return /[1-9]/.test(fraction.slice(3));
}
