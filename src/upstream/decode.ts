/**
 * Envelope unwrapping and validation of upstream bodies.
 *
 * The API family answers in several shapes (upstream.md, "Response shapes seen
 * in the wild"): `{"v1/<name>": {...}}`, a bare object, an array of one where
 * one object is expected, and lists as `{"v1/<names>": [...], "meta": {...}}`,
 * with or without `meta`, or as a bare array. Every shape is accepted; every
 * item is validated, and one bad item fails the whole call rather than
 * producing a wrong value.
 */
import type { z } from 'zod';
import type { ListParams, Page, PageMeta } from './api.js';
import { pageMetaModel } from './models.js';
import { UpstreamInvalidResponseError, UpstreamNotFoundError, type UpstreamErrorInit } from './errors.js';

/** A resource as the wire names it, with the model its items must satisfy. */
export interface ResourceShape<T> {
  /** Singular wire name, e.g. `transaction` (envelope key `v1/transaction`). */
  name: string;
  /** Plural wire name, e.g. `transactions` (envelope key `v1/transactions`). */
  plural: string;
  model: z.ZodType<T>;
}

export function resourceShape<T>(name: string, plural: string, model: z.ZodType<T>): ResourceShape<T> {
  return { name, plural, model };
}

/** One object: enveloped, bare, or the first of an array (an empty array means not found). */
export function decodeOne<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit): T {
  const unwrapped = unwrap(body, shape);
  if (Array.isArray(unwrapped)) {
    if (unwrapped.length === 0) throw new UpstreamNotFoundError(ctx);
    return validate(unwrapped[0], shape, '[0]', ctx);
  }
  return validate(unwrapped, shape, '', ctx);
}

/** Several objects: a list in any shape, or a single object taken as a list of one. */
export function decodeMany<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit): T[] {
  const unwrapped = unwrap(body, shape);
  if (Array.isArray(unwrapped)) return unwrapped.map((item, i) => validate(item, shape, `[${i}]`, ctx));
  return [validate(unwrapped, shape, '', ctx)];
}

/** A page: a list envelope (`meta` optional) or a bare array; `meta` decoded to camelCase. */
export function decodePage<T>(body: unknown, shape: ResourceShape<T>, ctx: UpstreamErrorInit, requested: ListParams = {}): Page<T> {
  const unwrapped = unwrap(body, shape);
  if (!Array.isArray(unwrapped)) {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `expected a list of ${shape.plural}` });
  }
  const items = unwrapped.map((item, i) => validate(item, shape, `[${i}]`, ctx));
  const rawMeta = isPlainObject(body) ? body['meta'] : undefined;
  return { items, meta: rawMeta == null ? null : decodeMeta(rawMeta, items.length, requested, ctx) };
}

function decodeMeta(raw: unknown, itemCount: number, requested: ListParams, ctx: UpstreamErrorInit): PageMeta {
  const parsed = pageMetaModel.safeParse(raw);
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

/** The value under `v1/<name>` or `v1/<plural>` when present, else the body itself. */
function unwrap(body: unknown, shape: ResourceShape<unknown>): unknown {
  if (isPlainObject(body)) {
    for (const key of [`v1/${shape.name}`, `v1/${shape.plural}`]) {
      if (key in body) return body[key];
    }
  }
  return body;
}

function validate<T>(item: unknown, shape: ResourceShape<T>, at: string, ctx: UpstreamErrorInit): T {
  const parsed = shape.model.safeParse(item);
  if (parsed.success) return parsed.data;
  throw new UpstreamInvalidResponseError({ ...ctx, detail: `${shape.name} ${describeIssue(parsed.error, at)}` });
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

/** Parses a success body; `what` names the resource for the error message. */
export function parseJsonBody(text: string, what: string, ctx: UpstreamErrorInit): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UpstreamInvalidResponseError({ ...ctx, detail: `${what} body is not JSON` });
  }
}

export interface ErrorBody {
  message?: string;
  fieldErrors: Record<string, string[]>;
}

/**
 * The upstream's error body `{"message": "...", "errors": {"field": ["..."]}}`
 * (upstream.md, Errors). Anything else, including non-JSON, decodes to no
 * message and no field errors: the status alone still classifies the error.
 */
export function decodeErrorBody(text: string): ErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { fieldErrors: {} };
  }
  if (!isPlainObject(body)) return { fieldErrors: {} };
  const fieldErrors: Record<string, string[]> = {};
  if (isPlainObject(body['errors'])) {
    for (const [field, messages] of Object.entries(body['errors'])) {
      const list = (Array.isArray(messages) ? messages : [messages]).filter((m): m is string => typeof m === 'string');
      if (list.length > 0) fieldErrors[field] = list;
    }
  }
  const message = body['message'];
  return typeof message === 'string' ? { message, fieldErrors } : { fieldErrors };
}
