/**
 * Pagination and filters shared by lists and searches. `page` is 1-based;
 * `per_page` defaults to 25 and is clamped to 100. Filters are read from
 * `filters[<field>]` or the bare `<field>` parameter. Lists are newest first.
 */
import { FieldErrors } from './errors.js';
import type { PageMeta } from './render.js';
import { isObject, readId, readTimestamp } from './validate.js';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

export function filterParam(query: Record<string, unknown>, name: string): unknown {
  const filters = query.filters;
  if (isObject(filters) && filters[name] !== undefined) return filters[name];
  return query[name];
}

function positiveInt(v: unknown, errs: FieldErrors, field: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    errs.add(field, `${field} must be a positive integer`);
    return undefined;
  }
  return n;
}

export interface Paging {
  page: number;
  perPage: number;
}

export interface CommonFilters {
  status: string | undefined;
  customerId: number | undefined;
  createdAfter: number | undefined;
  createdBefore: number | undefined;
}

/** Reads paging and the common filters, throwing one 422 for every bad parameter. */
export function readListQuery(query: Record<string, unknown>): Paging & CommonFilters & { errs: FieldErrors } {
  const errs = new FieldErrors();
  const page = positiveInt(query.page, errs, 'page') ?? 1;
  const perPage = Math.min(MAX_PER_PAGE, positiveInt(query.per_page, errs, 'per_page') ?? DEFAULT_PER_PAGE);
  const status = filterParam(query, 'status');
  const customerId = readId(filterParam(query, 'customer_id'), errs, 'customer_id');
  const after = readTimestamp(filterParam(query, 'created_after'), errs, 'created_after');
  const before = readTimestamp(filterParam(query, 'created_before'), errs, 'created_before');
  return {
    page,
    perPage,
    status: typeof status === 'string' && status !== '' ? status : undefined,
    customerId,
    createdAfter: after?.getTime(),
    createdBefore: before?.getTime(),
    errs,
  };
}

export function matchesCommon(
  row: { status?: string; customer_id?: number | null; created_at: string },
  f: CommonFilters,
): boolean {
  if (f.status !== undefined && row.status !== f.status) return false;
  if (f.customerId !== undefined && row.customer_id !== f.customerId) return false;
  if (f.createdAfter !== undefined || f.createdBefore !== undefined) {
    const t = Date.parse(row.created_at);
    if (f.createdAfter !== undefined && t < f.createdAfter) return false;
    if (f.createdBefore !== undefined && t > f.createdBefore) return false;
  }
  return true;
}

/** Newest first: rows are stored oldest first, so walk backwards. */
export function paginate<T>(rows: readonly T[], keep: (row: T) => boolean, paging: Paging): { items: T[]; meta: PageMeta } {
  const matching: T[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i] as T;
    if (keep(row)) matching.push(row);
  }
  const totalCount = matching.length;
  const totalPages = Math.max(1, Math.ceil(totalCount / paging.perPage));
  const start = (paging.page - 1) * paging.perPage;
  return {
    items: matching.slice(start, start + paging.perPage),
    meta: {
      current_page: paging.page,
      next_page: paging.page < totalPages ? paging.page + 1 : null,
      prev_page: paging.page > 1 ? Math.min(paging.page - 1, totalPages) : null,
      per_page: paging.perPage,
      total_pages: totalPages,
      total_count: totalCount,
    },
  };
}
