/**
 * Whether the upstream applied the page asked for (`page`, `per_page` are beyond the spec): cursors
 * built on another page would be wrong. Filters are not checked: rows are, so an ignored filter costs reads.
 */
import type { ListParams, Page } from './params.js';

/** The page parameter the answer shows was ignored, or null. */
export function ignoredParameter<T>(page: Page<T>, requested: ListParams): 'per_page' | 'page' | null {
  if (requested.perPage !== undefined && page.items.length > requested.perPage) return 'per_page';
  // An empty page serves nothing wrong, whatever page it claims to be.
  if (requested.page !== undefined && page.items.length > 0 && page.meta !== null && page.meta.currentPage !== requested.page) return 'page';
  return null;
}
