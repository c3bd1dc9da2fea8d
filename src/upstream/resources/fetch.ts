/**
 * What every resource file shares: decoding a call's answer as one object, a
 * list or a page (decode.ts handles the envelopes), and the wire shapes that
 * several resources send (pages, phone numbers, customer references).
 */
import type { CallOptions, CustomerRefParams, Id, ListItem, ListParams, Page, PhoneNumberParams } from '../api.js';
import { decodeList, decodeMany, decodeOne, decodePage, parseJsonBody, type ResourceShape } from '../decode.js';
import type { DecodeMemo } from '../decode-memo.js';
import { UpstreamParameterIgnoredError } from '../errors.js';
import { ignoredParameter } from './applied.js';
import type { Call, QueryValue, Send } from '../http.js';

export interface Fetch {
  one<T>(shape: ResourceShape<T>, call: Call, opts?: CallOptions): Promise<T>;
  /** `GET <pattern>` with `:id`: a read by id, whose answer must be that object (decode.ts, decodeOne). */
  byId<T>(shape: ResourceShape<T>, pattern: string, id: Id, opts?: CallOptions): Promise<T>;
  /** A write's answer of several objects: all decode, or the call fails. */
  many<T>(shape: ResourceShape<T>, call: Call, opts?: CallOptions): Promise<T[]>;
  /** A list read: a bad item is an error in its place, the others stand. */
  list<T>(shape: ResourceShape<T>, call: Call, opts?: CallOptions): Promise<ListItem<T>[]>;
  /** A page; one that shows its `page` or `per_page` was ignored is an error (applied.ts). */
  page<T>(shape: ResourceShape<T>, call: Call, params?: ListParams, opts?: CallOptions): Promise<Page<T>>;
}

/** `memo`: items decoded before are not validated again (decode-memo.ts); without one, every item is. */
export function createFetch(send: Send, memo?: DecodeMemo): Fetch {
  const shaped = <T>(shape: ResourceShape<T>): ResourceShape<T> => (memo ? { ...shape, memo } : shape);
  return {
    async one(shape, call, opts) {
      const { text, ctx } = await send(call, opts);
      return decodeOne(parseJsonBody(text, shape.name, ctx), shaped(shape), ctx);
    },
    async byId(shape, pattern, id, opts) {
      const { text, ctx } = await send({ method: 'GET', pattern, path: { id } }, opts);
      // The spec's reads of currencies, webhooks, events and logs answer arrays: take that object, or none.
      return decodeOne(parseJsonBody(text, shape.name, ctx), shaped(shape), ctx, id);
    },
    async many(shape, call, opts) {
      const { text, ctx } = await send(call, opts);
      return decodeMany(parseJsonBody(text, shape.plural, ctx), shaped(shape), ctx);
    },
    async list(shape, call, opts) {
      const { text, ctx } = await send(call, opts);
      return decodeList(parseJsonBody(text, shape.plural, ctx), shaped(shape), ctx);
    },
    async page(shape, call, params = {}, opts) {
      const { text, ctx } = await send(call, opts);
      const page = decodePage(parseJsonBody(text, shape.plural, ctx), shaped(shape), ctx, params);
      const ignored = ignoredParameter(page, params);
      if (ignored !== null) throw new UpstreamParameterIgnoredError({ ...ctx, parameter: ignored });
      return page;
    },
  };
}

// camelCase params -> snake_case wire shapes. `undefined` fields are dropped by
// JSON serialisation, so partial updates send only what was given.

export function pageQuery(params: ListParams = {}): Record<string, QueryValue> {
  return { page: params.page, per_page: params.perPage };
}

/**
 * A search's query: the page, then each filter as `filters[<field>]=value`
 * (docs/upstream.md, Operations), the creation-time range included.
 */
export function searchQuery(
  params: ListParams & { createdAfter?: string | undefined; createdBefore?: string | undefined },
  filters: Record<string, QueryValue>,
): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = pageQuery(params);
  const all = { ...filters, created_after: params.createdAfter, created_before: params.createdBefore };
  for (const [field, value] of Object.entries(all)) query[`filters[${field}]`] = value;
  return query;
}

export function phoneNumberBody(phone: PhoneNumberParams | undefined) {
  return phone === undefined ? undefined : { number: phone.number, country: phone.country };
}

/** An existing customer is referenced by id alone; otherwise the upstream creates one from the details. */
export function customerRefBody(ref: CustomerRefParams | undefined) {
  if (ref === undefined) return undefined;
  if (ref.id !== undefined) return { id: ref.id };
  return {
    firstname: ref.firstname,
    lastname: ref.lastname,
    email: ref.email,
    phone_number: phoneNumberBody(ref.phoneNumber),
  };
}

export function currencyBody(iso: string | undefined) {
  return iso === undefined ? undefined : { iso };
}
