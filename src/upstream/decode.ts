/**
 * Envelope unwrapping and validation of upstream bodies, in every shape the API
 * answers (docs/upstream.md, Response shapes); number parsing: docs/architecture.md,
 * Design notes, "Exact numbers in upstream bodies".
 */
import { isLosslessNumber, parse as parseLossless, stringify as stringifyLossless, type LosslessNumber } from 'lossless-json';
import type { z } from 'zod';
import type { ListItem, ListParams, Page, PageMeta } from './params.js';
import { Decimal } from './decimal.js';
import { moneyKeysOf, nestedMoneyKeysOf, pageMetaModel } from './models.js';
import { UpstreamInvalidResponseError, UpstreamNotFoundError, type UpstreamErrorInit } from './errors.js';
import type { DecodeMemo } from './decode-memo.js';
import { MAX_NESTING, nestsWithin } from './nesting.js';

/** A resource as the wire names it, with the model its items must satisfy. */
export interface ResourceShape<T> {
  /** Wire names, e.g. `transaction` / `transactions` (envelope keys `v1/<name>`). */
  name: string;
  plural: string;
  model: z.ZodType<T>;
  /** Items this shape decoded before (decode-memo.ts); without one, every item is validated. */
  memo?: DecodeMemo;
}

export function resourceShape<T>(name: string, plural: string, model: z.ZodType<T>): ResourceShape<T> {
  return { name, plural, model };
}

/** One object (an empty array means not found); with `expectedId`, an answer about another object is invalid, never taken for the one asked. */
export function decodeOne<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit, expectedId?: unknown): T {
  const lossless = parsedLosslessly(body);
  const unwrapped = unwrap(body, shape);
  const wanted = expectedId === undefined ? undefined : Number(expectedId);
  if (Array.isArray(unwrapped)) {
    if (unwrapped.length === 0) throw new UpstreamNotFoundError(ctx);
    const at = wanted === undefined ? 0 : unwrapped.findIndex((item) => idOf(item) === wanted);
    if (at < 0) throw new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name}: none of the ${unwrapped.length} items has the requested id` });
    return validate(unwrapped[at], shape, `[${at}]`, ctx, lossless || parsedLosslessly(unwrapped[at]));
  }
  const given = idOf(unwrapped);
  if (wanted !== undefined && given !== undefined && given !== wanted) {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name}: the object has another id than the one requested` });
  }
  return validate(unwrapped, shape, '', ctx, lossless || parsedLosslessly(unwrapped));
}

/** `12`, `"12"` and `12.0` are one id. */
function idOf(item: unknown): number | undefined {
  if (!isPlainObject(item) || item.id === undefined || item.id === null) return undefined;
  const id = typeof item.id === 'number' ? item.id : Number(String(item.id));
  return Number.isFinite(id) ? id : undefined;
}

/** All or nothing: what a write did upstream must be known whole. */
export function decodeMany<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit): T[] {
  return everyItem(decodeList(body, shape, ctx));
}

/** A bad item is its error, in its place: a page is worth more than nothing, and a wrong value is never served. */
export function decodeList<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit): ListItem<T>[] {
  const lossless = parsedLosslessly(body);
  const unwrapped = unwrap(body, shape);
  if (Array.isArray(unwrapped)) return unwrapped.map((item, i) => checkItem(item, shape, i, ctx, lossless));
  return [validate(unwrapped, shape, '', ctx, lossless || parsedLosslessly(unwrapped))];
}

export function everyItem<T>(items: readonly ListItem<T>[]): T[] {
  const failed = items.find((item): item is UpstreamInvalidResponseError => item instanceof UpstreamInvalidResponseError);
  if (failed) throw failed;
  return items as T[];
}

export function decodePage<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit, requested: ListParams = {}): Page<T> {
  const unwrapped = unwrap(body, shape);
  if (!Array.isArray(unwrapped)) {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `expected a list of ${shape.plural}` });
  }
  const lossless = parsedLosslessly(body);
  return pageOf(body, unwrapped.map((item, i) => checkItem(item, shape, i, ctx, lossless)), ctx, requested);
}

/** The list a page's body holds, or null when it holds none (decodePage refuses it). */
export function listIn(body: unknown, shape: ResourceShape<unknown>): unknown[] | null {
  const unwrapped = unwrap(body, shape);
  return Array.isArray(unwrapped) ? unwrapped : null;
}

/** Item `i` of a list; `lossless`: the whole body was parsed losslessly (an item parsed alone carries its own mark). */
export function checkItem<T>(item: unknown, shape: ResourceShape<T>, i: number, ctx: UpstreamErrorInit, lossless: boolean): ListItem<T> {
  return check(item, shape, `[${i}]`, ctx, lossless || parsedLosslessly(item));
}

/** A page of checked items with its body's meta. */
export function pageOf<T>(body: unknown, items: ListItem<T>[], ctx: UpstreamErrorInit, requested: ListParams): Page<T> {
  const rawMeta = isPlainObject(body) ? body['meta'] : undefined;
  return { items, meta: rawMeta == null ? null : decodeMeta(rawMeta, items.length, requested, ctx) };
}

function decodeMeta(raw: unknown, itemCount: number, requested: ListParams, ctx: UpstreamErrorInit): PageMeta {
  const parsed = pageMetaModel.safeParse(metaFields(raw));
  if (!parsed.success) {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `page meta ${describeIssue(parsed.error, '')}` });
  }
  const meta = parsed.data;
  return {
    currentPage: meta.current_page ?? requested.page ?? 1,
    perPage: meta.per_page ?? requested.perPage ?? itemCount,
    totalPages: meta.total_pages ?? null,
    totalCount: meta.total_count ?? null,
    nextPage: meta.next_page ?? null,
  };
}

/** A field nested too deep is left for zod to refuse. */
function metaFields(raw: unknown): unknown {
  if (!isPlainObject(raw) || isLosslessNumber(raw)) return nestsWithin(raw, MAX_NESTING) ? plain(raw) : raw;
  const known: Record<string, unknown> = {};
  for (const key of META_KEYS) {
    if (!(key in raw)) continue;
    const value = raw[key];
    known[key] = nestsWithin(value, MAX_NESTING) ? plain(value) : value;
  }
  return known;
}
const META_KEYS = Object.keys(pageMetaModel.shape);

function unwrap(body: unknown, shape: ResourceShape<unknown>): unknown {
  if (isPlainObject(body)) {
    for (const key of [`v1/${shape.name}`, `v1/${shape.plural}`]) {
      if (key in body) return body[key];
    }
  }
  return body;
}

function validate<T>(item: unknown, shape: ResourceShape<T>, at: string, ctx: UpstreamErrorInit, lossless: boolean): T {
  const checked = check(item, shape, at, ctx, lossless);
  if (checked instanceof UpstreamInvalidResponseError) throw checked;
  return checked;
}

/** Returned, not thrown, so a list can keep its other items. */
function check<T>(item: unknown, shape: ResourceShape<T>, at: string, ctx: UpstreamErrorInit, lossless: boolean): T | UpstreamInvalidResponseError {
  const known = shape.memo?.get(shape.model, item);
  if (known !== undefined) return known as T;
  if (!nestsWithin(item, MAX_NESTING)) return itemError(item, shape, ctx, `failed validation at ${at || 'the top level'} (nested deeper than ${MAX_NESTING} levels)`);
  const moneyKeys = moneyKeysOf.get(shape.model);
  const parsed = shape.model.safeParse(lossless ? withAmounts(item, moneyKeys, nestedMoneyKeys(shape.model, item)) : withDecimalAmounts(item, moneyKeys));
  if (parsed.success) {
    shape.memo?.set(shape.model, item, parsed.data);
    return parsed.data;
  }
  return itemError(item, shape, ctx, describeIssue(parsed.error, at));
}

function nestedMoneyKeys(model: z.ZodType, item: unknown): Readonly<Record<string, ReadonlySet<string> | undefined>> | undefined {
  const of = nestedMoneyKeysOf.get(model);
  return of !== undefined && isPlainObject(item) ? of(item) : undefined;
}

function itemError(item: unknown, shape: ResourceShape<unknown>, ctx: UpstreamErrorInit, what: string): UpstreamInvalidResponseError {
  const id = idOf(item);
  const itemId = id !== undefined && Number.isSafeInteger(id) && id > 0 ? id : undefined;
  return new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name} ${what}`, itemId });
}

/** Path and kind only: zod's own messages can quote the received value, which may be customer data. */
function describeIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0];
  if (!issue) return 'failed validation';
  const path = prefix + issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  const where = path === '' ? 'at the top level' : `at ${path.replace(/^\./, '')}`;
  const expected = issue.code === 'invalid_type' ? `, expected ${issue.expected}` : '';
  return `failed validation ${where} (${issue.code}${expected})`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decimals made here: zod's money transform would make the same at several times the cost. */
function withDecimalAmounts(item: unknown, moneyKeys: ReadonlySet<string> | undefined): unknown {
  if (moneyKeys === undefined || !isPlainObject(item)) return item;
  let out: Record<string, unknown> | null = null;
  for (const key of moneyKeys) {
    const value = item[key];
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    out ??= { ...item };
    out[key] = Decimal.fromParsedNumber(value);
  }
  return out ?? item;
}

/** Recurses: callers check the item's depth first (nestsWithin). `nested`: amount keys under some keys (an event's entity). */
export function withAmounts(item: unknown, moneyKeys: ReadonlySet<string> | undefined, nested?: Readonly<Record<string, ReadonlySet<string> | undefined>>): unknown {
  if (!isPlainObject(item) || isLosslessNumber(item)) return plain(item);
  let out: Record<string, unknown> | null = null;
  for (const key in item) {
    const value = item[key];
    const next =
      moneyKeys?.has(key) && isLosslessNumber(value)
        ? Decimal.fromJsonNumber((value as LosslessNumber).value)
        : nested !== undefined && Object.hasOwn(nested, key)
          ? withAmounts(value, nested[key])
          : plain(value);
    if (next !== value && out === null) out = { ...item };
    if (out !== null) out[key] = next;
  }
  return out ?? item;
}

function plain(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Decimal) return value;
  if (isLosslessNumber(value)) return Number((value as LosslessNumber).value);
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const next = plain(value[i]);
      if (next !== value[i] && out === null) out = value.slice();
      if (out !== null) out[i] = next;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const key in record) {
    const next = plain(record[key]);
    if (next !== record[key] && out === null) out = { ...record };
    if (out !== null) out[key] = next;
  }
  return out ?? record;
}

/** Matches every real number token; a match inside a string only costs the fast path. */
const NUMBER_TOKEN = /[:,[]\s*(-?\d[\d.eE+-]*)(?=\s*(?:[,}\]]|$))/g;

/** A leading-zero token is no JSON number (a time such as `10:07` in a string): passed over. */
function numbersSurviveJsonParse(text: string): boolean {
  NUMBER_TOKEN.lastIndex = 0;
  for (let m = NUMBER_TOKEN.exec(text); m !== null; m = NUMBER_TOKEN.exec(text)) {
    const token = m[1]!;
    if (/^-?0\d/.test(token)) continue;
    if (String(Number(token)) !== token) return false;
  }
  return true;
}

/** Only these bodies' items need a walk to turn lossless numbers. */
const losslessBodies = new WeakSet<object>();

export function parsedLosslessly(body: unknown): boolean {
  return typeof body === 'object' && body !== null && losslessBodies.has(body);
}

/** A value parsed on its own from a large body (decode-sliced.ts) that needed the lossless parse. */
export function markLossless(value: unknown): void {
  if (typeof value === 'object' && value !== null) losslessBodies.add(value);
}

export function parseJsonBody(text: string, what: string, ctx: UpstreamErrorInit): unknown {
  try {
    return parseExactJson(text);
  } catch {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `${what} body is not JSON` });
  }
}

/** Also for JSON that answers no call (a webhook event). */
export function parseExactJson(text: string): unknown {
  // eslint-disable-next-line no-restricted-properties -- every number token was checked to come back whole
  if (numbersSurviveJsonParse(text)) return JSON.parse(text);
  // A repeated key keeps its last value, as JSON.parse does (lossless-json would refuse the text).
  const body = parseLossless(text, undefined, { onDuplicateKey: ({ newValue }) => newValue });
  if (typeof body === 'object' && body !== null) losslessBodies.add(body);
  return body;
}

/** A `Decimal` is written from its digits, never through a JS number. */
export function encodeJsonBody(body: unknown): string {
  return stringifyLossless(body, null, undefined, [{ test: (v) => v instanceof Decimal, stringify: (v) => String(v) }]) ?? '';
}
