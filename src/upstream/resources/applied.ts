/**
 * Whether the upstream applied the page and filters the gateway sent. None of
 * them is in the spec (docs/upstream.md, Calls beyond the spec): an upstream
 * that ignores one answers as if it had not been sent, with a 200, and that
 * answer would be served as the filtered page. What can be told from the
 * answer is checked: an item that contradicts an exact filter, more items
 * than `per_page`, or `meta.current_page` naming another page. Free text
 * (`filters[q]`) cannot be checked, nor anything on a page with no item.
 */
import type { ListParams, Page } from '../api.js';
import { UpstreamInvalidResponseError } from '../errors.js';

/** One filter as sent (`filters[status]`) and whether an item, as decoded, contradicts it. */
export interface FilterCheck<T> {
  parameter: string;
  contradicts(item: T): boolean;
}

/** The parameter the page shows was ignored, or null. */
export function ignoredParameter<T>(page: Page<T>, requested: ListParams, filters: readonly FilterCheck<T>[]): string | null {
  if (requested.perPage !== undefined && page.items.length > requested.perPage) return 'per_page';
  // An empty page serves nothing wrong, whatever page it claims to be.
  if (requested.page !== undefined && page.items.length > 0 && page.meta !== null && page.meta.currentPage !== requested.page) return 'page';
  for (const item of page.items) {
    if (item instanceof UpstreamInvalidResponseError) continue;
    const ignored = filters.find((f) => f.contradicts(item));
    if (ignored) return ignored.parameter;
  }
  return null;
}

/** A filter on a value the item may lack: only a value that is there and differs contradicts it. */
export function exact<T>(parameter: string, wanted: string | number | undefined, read: (item: T) => unknown): FilterCheck<T>[] {
  if (wanted === undefined) return [];
  const norm = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
  return [{ parameter, contradicts: (item) => { const value = read(item); return value !== null && value !== undefined && norm(value) !== norm(wanted); } }];
}

/** Upstream clocks and ours may round differently: a second of slack before a time contradicts a bound. */
const SLACK_MS = 1000;

/** `filters[created_after]` and `filters[created_before]`, inclusive, against an item's `created_at`. */
export function createdWithin<T extends { created_at?: string | null }>(after: string | undefined, before: string | undefined): FilterCheck<T>[] {
  const at = (item: T) => (typeof item.created_at === 'string' ? Date.parse(item.created_at) : NaN);
  const checks: FilterCheck<T>[] = [];
  if (after !== undefined) checks.push({ parameter: 'filters[created_after]', contradicts: (item) => at(item) < Date.parse(after) - SLACK_MS });
  if (before !== undefined) checks.push({ parameter: 'filters[created_before]', contradicts: (item) => at(item) > Date.parse(before) + SLACK_MS });
  return checks;
}
