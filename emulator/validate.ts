/**
 * Field readers for request bodies and query strings. Each reader records its
 * problems in a `FieldErrors` and returns `undefined` on failure, so that a
 * handler reports every bad field at once and changes nothing. Form-encoded
 * bodies carry every value as a string, so numbers and booleans also accept
 * their string forms. Unknown fields are ignored.
 */
import type { FieldErrors } from './errors.js';
import type { JsonObject } from './store.js';

export const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

export function readObject(v: unknown, errs: FieldErrors, field: string, required = false): JsonObject | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) errs.add(field, `${field} is required`);
    return undefined;
  }
  if (!isObject(v)) {
    errs.add(field, `${field} must be an object`);
    return undefined;
  }
  return v;
}

export function readString(
  v: unknown,
  errs: FieldErrors,
  field: string,
  opts: { required?: boolean; max?: number } = {},
): string | undefined {
  if (v === undefined || v === null) {
    if (opts.required) errs.add(field, `${field} is required`);
    return undefined;
  }
  if (typeof v !== 'string' && typeof v !== 'number') {
    errs.add(field, `${field} must be a string`);
    return undefined;
  }
  const s = String(v).trim();
  if (opts.required && s === '') {
    errs.add(field, `${field} is required`);
    return undefined;
  }
  if (s.length > (opts.max ?? 1000)) {
    errs.add(field, `${field} must be at most ${opts.max ?? 1000} characters`);
    return undefined;
  }
  return s;
}

/** A positive integer amount (XOF has no minor unit). */
export function readAmount(v: unknown, errs: FieldErrors, field: string, required: boolean): number | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) errs.add(field, `${field} is required`);
    return undefined;
  }
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n <= 0) {
    errs.add(field, `${field} must be a positive number`);
    return undefined;
  }
  if (!Number.isInteger(n)) {
    errs.add(field, `${field} must be an integer (the currency has no minor unit)`);
    return undefined;
  }
  if (n > 1_000_000_000_000) {
    errs.add(field, `${field} must be at most 1000000000000`);
    return undefined;
  }
  return n;
}

export function readId(v: unknown, errs: FieldErrors, field: string, required = false): number | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) errs.add(field, `${field} is required`);
    return undefined;
  }
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    errs.add(field, `${field} must be a positive integer id`);
    return undefined;
  }
  return n;
}

export function parseIdParam(v: string | undefined): number | undefined {
  if (v === undefined || !/^\d{1,15}$/.test(v)) return undefined;
  return Number(v);
}

export function readBool(v: unknown, errs: FieldErrors, field: string): boolean | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1' || v === 1) return true;
  if (v === 'false' || v === '0' || v === 0) return false;
  errs.add(field, `${field} must be a boolean`);
  return undefined;
}

// Deliberately simple: one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function readEmail(v: unknown, errs: FieldErrors, field: string, required: boolean): string | undefined {
  const s = readString(v, errs, field, { required, max: 254 });
  if (s === undefined || s === '') return s === '' && !required ? undefined : s;
  if (!EMAIL.test(s)) {
    errs.add(field, `${field} must be a valid e-mail address`);
    return undefined;
  }
  return s.toLowerCase();
}

export function readUrl(v: unknown, errs: FieldErrors, field: string, required: boolean): string | undefined {
  const s = readString(v, errs, field, { required, max: 2000 });
  if (s === undefined || s === '') return undefined;
  let ok = false;
  try {
    const u = new URL(s);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) {
    errs.add(field, `${field} must be an http or https URL`);
    return undefined;
  }
  return s;
}

export function readTimestamp(v: unknown, errs: FieldErrors, field: string): Date | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' && typeof v !== 'number') {
    errs.add(field, `${field} must be an ISO 8601 date-time`);
    return undefined;
  }
  const d = typeof v === 'number' ? new Date(v * 1000) : new Date(v);
  if (Number.isNaN(d.getTime()) || (typeof v === 'string' && !/^\d{4}-\d{2}-\d{2}/.test(v))) {
    errs.add(field, `${field} must be an ISO 8601 date-time`);
    return undefined;
  }
  return d;
}

export interface PhoneInput {
  number: string;
  country: string;
}

/**
 * `{number, country}`: the number as a string or a number (the spec shows both),
 * with or without an international prefix; the country in either case, stored
 * lower-case.
 */
export function readPhone(v: unknown, errs: FieldErrors, field: string, required = false): PhoneInput | undefined {
  const obj = readObject(v, errs, field, required);
  if (!obj) return undefined;
  const before = Object.keys(errs.errors).length;
  let number: string | undefined;
  const raw = obj.number;
  if (raw === undefined || raw === null || raw === '') errs.add(`${field}.number`, `${field}.number is required`);
  else if (typeof raw === 'number') {
    if (Number.isInteger(raw) && raw > 0) number = String(raw);
    else errs.add(`${field}.number`, `${field}.number must be a phone number`);
  } else if (typeof raw === 'string') {
    const digits = raw.replace(/[\s().-]/g, '');
    if (/^\+?\d{6,15}$/.test(digits)) number = digits;
    else errs.add(`${field}.number`, `${field}.number must be 6 to 15 digits, optionally after +`);
  } else errs.add(`${field}.number`, `${field}.number must be a string or a number`);
  const country = obj.country;
  if (country === undefined || country === null || country === '') errs.add(`${field}.country`, `${field}.country is required`);
  else if (typeof country !== 'string' || !/^[a-zA-Z]{2}$/.test(country.trim()))
    errs.add(`${field}.country`, `${field}.country must be a two-letter country code`);
  if (Object.keys(errs.errors).length !== before || number === undefined || typeof country !== 'string') return undefined;
  return { number, country: country.trim().toLowerCase() };
}

export function readMetadata(v: unknown, errs: FieldErrors, field: string): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    errs.add(field, `${field} must be an object`);
    return undefined;
  }
  return v;
}
