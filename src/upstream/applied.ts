/**
 * Whether the upstream applied the page the gateway asked for. `page` and
 * `per_page` are not in the spec (docs/upstream.md, Calls beyond the spec):
 * an upstream that ignores one answers another page with a 200, and cursors
 * built on it would be wrong. What can be told from the answer is checked:
 * more items than `per_page`, or `meta.current_page` naming another page.
 *
 * Filters are not checked here: the gateway checks every row against the
 * caller's filter itself and reads on when the upstream did not filter
 * (src/payments/filters.ts, src/pagination.ts), so an upstream that ignores a
 * filter costs reads, not a wrong answer.
 */
import type { ListParams, Page } from './params.js';

/** The page parameter the answer shows was ignored, or null. */
export function ignoredParameter<T>(page: Page<T>, requested: ListParams): 'per_page' | 'page' | null {
  if (requested.perPage !== undefined && page.items.length > requested.perPage) return 'per_page';
  // An empty page serves nothing wrong, whatever page it claims to be.
  if (requested.page !== undefined && page.items.length > 0 && page.meta !== null && page.meta.currentPage !== requested.page) return 'page';
  return null;
}
