/**
 * Envelope unwrapping and validation of upstream bodies.
 *
 * The API family answers in several shapes
 * (docs/upstream.md, Response shapes): `{"v1/<name>": {...}}`, a bare
 * object, an array of one where one object is expected, and lists as
 * `{"v1/<names>": [...], "meta": {...}}`, with or without `meta`, or as a
 * bare array. Every shape is accepted and every item is validated. In a list
 * read, an item that fails becomes an error in its own place and the other
 * items stand (a page is worth more than nothing, and a wrong value is never
 * served); one object, or a write's answer, fails the call as a whole.
 *
 * Numbers: bodies are parsed with lossless-json, which keeps each number's
 * source text (Node 20's `JSON.parse` has no access to it and would round
 * `9007199254740993`). An item's amount keys (models.ts, `moneyKeysOf`) become
 * `Decimal`s from that text; every other number becomes a JS number exactly as
 * `JSON.parse` would make it, so ids, counts and metadata are unchanged.
 * That parser costs about 1 ms more than `JSON.parse` per 100-transaction
 * page (48 kB), measured on Node 20, so it is the slow path: a body whose
 * every number token reads back as the same text from a JS number (`2500`,
 * `12.5`, ids, counts: what the upstream sends) is parsed with `JSON.parse`,
 * where the number already holds every digit of its token; its items are
 * then taken as they are, with no walk to turn numbers back.
 *
 * Depth: an item nested deeper than MAX_NESTING levels is refused in its
 * place (nesting.ts). lossless-json's parser recurses too: a body that needs
 * it and nests some thousands of levels fails whole, as not JSON.
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
  /** Singular wire name, e.g. `transaction` (envelope key `v1/transaction`). */
  name: string;
  /** Plural wire name, e.g. `transactions` (envelope key `v1/transactions`). */
  plural: string;
  model: z.ZodType<T>;
  /** Items this shape decoded before (decode-memo.ts); without one, every item is validated. */
  memo?: DecodeMemo;
}

export function resourceShape<T>(name: string, plural: string, model: z.ZodType<T>): ResourceShape<T> {
  return { name, plural, model };
}

/**
 * One object: enveloped, bare, or from an array (an empty array means not
 * found). With `expectedId` (a read by id), the object must be that one: from
 * an array, the item with that id, wherever it stands; an answer about
 * another object is an invalid response, never taken for the one asked.
 */
export function decodeOne<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit, expectedId?: unknown): T {
  const lossless = parsedLosslessly(body);
  const unwrapped = unwrap(body, shape);
  const wanted = expectedId === undefined ? undefined : Number(expectedId);
  if (Array.isArray(unwrapped)) {
    if (unwrapped.length === 0) throw new UpstreamNotFoundError(ctx);
    const at = wanted === undefined ? 0 : unwrapped.findIndex((item) => idOf(item) === wanted);
    if (at < 0) throw new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name}: none of the ${unwrapped.length} items has the requested id` });
    return validate(unwrapped[at], shape, `[${at}]`, ctx, lossless);
  }
  const given = idOf(unwrapped);
  if (wanted !== undefined && given !== undefined && given !== wanted) {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name}: the object has another id than the one requested` });
  }
  return validate(unwrapped, shape, '', ctx, lossless);
}

/**
 * An item's id as a number (from a number, a lossless number or a numeric
 * string, so `12`, `"12"` and `12.0` are one id), when it has one. An item
 * without one fails validation anyway: ids are required.
 */
function idOf(item: unknown): number | undefined {
  if (!isPlainObject(item) || item.id === undefined || item.id === null) return undefined;
  const id = typeof item.id === 'number' ? item.id : Number(String(item.id));
  return Number.isFinite(id) ? id : undefined;
}

/**
 * Several objects, all or nothing (a write's answer: what the upstream did
 * must be known whole): a list in any shape, or a single object as a list of one.
 */
export function decodeMany<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit): T[] {
  return everyItem(decodeList(body, shape, ctx));
}

/**
 * A list read, item by item: a list in any shape, or a single object as a
 * list of one. An item that fails validation is its error, in its place.
 */
export function decodeList<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit): ListItem<T>[] {
  const lossless = parsedLosslessly(body);
  const unwrapped = unwrap(body, shape);
  if (Array.isArray(unwrapped)) return unwrapped.map((item, i) => check(item, shape, `[${i}]`, ctx, lossless));
  return [validate(unwrapped, shape, '', ctx, lossless)];
}

/** The items of a list read when every one decoded, else the first item's error: for callers that need all or none. */
export function everyItem<T>(items: readonly ListItem<T>[]): T[] {
  const failed = items.find((item): item is UpstreamInvalidResponseError => item instanceof UpstreamInvalidResponseError);
  if (failed) throw failed;
  return items as T[];
}

/** A page: a list envelope (`meta` optional) or a bare array, item by item as decodeList; `meta` decoded to camelCase. */
export function decodePage<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit, requested: ListParams = {}): Page<T> {
  const unwrapped = unwrap(body, shape);
  if (!Array.isArray(unwrapped)) {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `expected a list of ${shape.plural}` });
  }
  const lossless = parsedLosslessly(body);
  const items = unwrapped.map((item, i) => check(item, shape, `[${i}]`, ctx, lossless));
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

/** The known fields of a page's meta as plain values (a field nested too deep is left for zod to refuse); other fields are not read. */
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

/** The value under `v1/<name>` or `v1/<plural>` when present, else the body itself. */
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

/** The item decoded, or the error naming where it failed (returned, not thrown, so a list can keep its other items). */
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

/** The amount keys of the objects under some of an item's keys (models.ts, nestedMoneyKeysOf). */
function nestedMoneyKeys(model: z.ZodType, item: unknown): Readonly<Record<string, ReadonlySet<string> | undefined>> | undefined {
  const of = nestedMoneyKeysOf.get(model);
  return of !== undefined && isPlainObject(item) ? of(item) : undefined;
}

/** An item's error, naming its id when it has a usable one (so a list can say which item failed). */
function itemError(item: unknown, shape: ResourceShape<unknown>, ctx: UpstreamErrorInit, what: string): UpstreamInvalidResponseError {
  const id = idOf(item);
  const itemId = id !== undefined && Number.isSafeInteger(id) && id > 0 ? id : undefined;
  return new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name} ${what}`, itemId });
}

/**
 * Names the first failing path and the kind of failure only: zod's own
 * messages can quote the received value, which may be customer data.
 */
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

/**
 * An item of a body `JSON.parse` read (every number already a JS number
 * holding every digit of its token), with its amount keys as `Decimal`s made
 * from those numbers: the model's money schema would make the same from a
 * number, at several times the cost of taking a `Decimal` (zod runs a
 * transform per field). The item is copied only when it has amounts.
 */
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

/**
 * An item of a body lossless-json read, with its amount keys as `Decimal`s
 * from their source text and every other number as a JS number. Values that
 * are already plain pass as they are; `nested` names the amount keys of the
 * objects under some keys (an event's entity). It recurses: the item's depth
 * is checked first (nestsWithin).
 */
export function withAmounts(item: unknown, moneyKeys: ReadonlySet<string> | undefined, nested?: Readonly<Record<string, ReadonlySet<string> | undefined>>): unknown {
  if (!isPlainObject(item) || isLosslessNumber(item)) return plain(item);
  // Copied only when something changes.
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

/** What `JSON.parse` would have produced: lossless numbers become JS numbers (copy on write). */
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

/**
 * A number token where JSON allows one: after `:`, `,` or `[`, before `,`,
 * `}`, `]` or the end. Every real number token matches; so may some text
 * inside strings, which only costs the fast path. Times inside strings
 * (`10:42:35.450Z`) do not, being followed by more text.
 */
const NUMBER_TOKEN = /[:,[]\s*(-?\d[\d.eE+-]*)(?=\s*(?:[,}\]]|$))/g;

/**
 * Whether `JSON.parse` keeps every number of this text exactly: each token
 * reads back as itself from a JS number. Tokens with a leading zero cannot be
 * JSON numbers (a time such as `10:07` inside a string) and are passed over.
 */
function numbersSurviveJsonParse(text: string): boolean {
  NUMBER_TOKEN.lastIndex = 0;
  for (let m = NUMBER_TOKEN.exec(text); m !== null; m = NUMBER_TOKEN.exec(text)) {
    const token = m[1]!;
    if (/^-?0\d/.test(token)) continue;
    if (String(Number(token)) !== token) return false;
  }
  return true;
}

/**
 * Bodies parseExactJson read with lossless-json: only their items hold lossless
 * numbers to turn into JS numbers or `Decimal`s. An item of any other body is
 * taken as `JSON.parse` made it, with no walk over its values.
 */
const losslessBodies = new WeakSet<object>();

/** Whether parseExactJson read `body` with lossless-json: its values may hold lossless numbers, for withAmounts to turn. */
export function parsedLosslessly(body: unknown): boolean {
  return typeof body === 'object' && body !== null && losslessBodies.has(body);
}

/**
 * Parses a success body: with `JSON.parse` when every number token comes back
 * whole, else with lossless-json, numbers kept as their source text until an
 * item is validated; `what` names the resource for the error message.
 */
export function parseJsonBody(text: string, what: string, ctx: UpstreamErrorInit): unknown {
  try {
    return parseExactJson(text);
  } catch {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `${what} body is not JSON` });
  }
}

/**
 * JSON text read as parseJsonBody reads a body, for JSON that is no answer to
 * a call (a webhook event): `JSON.parse` when every number token comes back
 * whole, else lossless-json, whose numbers withAmounts then turns into
 * `Decimal`s or JS numbers. Throws on text that is not JSON, and (lossless-json
 * recursing) on text that needs lossless-json and nests some thousands of levels.
 */
export function parseExactJson(text: string): unknown {
  // eslint-disable-next-line no-restricted-properties -- every number token was checked to come back whole
  if (numbersSurviveJsonParse(text)) return JSON.parse(text);
  // A repeated key keeps its last value, as JSON.parse does (lossless-json would refuse the text).
  const body = parseLossless(text, undefined, { onDuplicateKey: ({ newValue }) => newValue });
  if (typeof body === 'object' && body !== null) losslessBodies.add(body);
  return body;
}

/**
 * Serialises a request body: a `Decimal` is written as a JSON number token
 * made of its digits, never through a JS number; the rest as `JSON.stringify`
 * would (undefined fields dropped).
 */
export function encodeJsonBody(body: unknown): string {
  return stringifyLossless(body, null, undefined, [{ test: (v) => v instanceof Decimal, stringify: (v) => String(v) }]) ?? '';
}
