/**
 * Relay cursor connections over the upstream's page/per_page pagination.
 *
 * Cursors are opaque to callers but are, inside, the absolute offset of the
 * item in the upstream's (newest-first) ordering. A window [offset, offset+first)
 * is read with one upstream page whenever a page size p >= first divides the
 * offset (always the case when a client pages forward with a fixed `first`);
 * otherwise with the two pages of size `first` that cover it.
 */
import type { Page, PageMeta } from './upstream/api.js';
import { badUserInput } from './errors.js';

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
}

export interface PaginationLimits {
  defaultFirst: number;
  maxFirst: number;
}

export interface Window {
  offset: number;
  first: number;
}

/**
 * Nodes are typed `T | null`, but a malformed item is its Error (`ListItem`,
 * src/upstream/api.ts): graphql-js reports an Error value at the item's path,
 * `null` there, and the other items stand. The generated resolver types know
 * no Error values, hence the type.
 */
export interface Connection<T> {
  edges: { cursor: string; node: T | null }[];
  nodes: (T | null)[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
  totalCount: number | null;
}

const CURSOR_PREFIX = 'offset:';

export function encodeCursor(offset: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${offset}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const offset = Number(text.slice(CURSOR_PREFIX.length));
  if (!text.startsWith(CURSOR_PREFIX) || !Number.isSafeInteger(offset) || offset < 0) {
    throw badUserInput('`after` is not a cursor returned by this API.', 'after');
  }
  return offset;
}

/** Validates `first`/`after` and turns them into an absolute window. */
export function toWindow(args: ConnectionArgs, limits: PaginationLimits): Window {
  const first = args.first ?? limits.defaultFirst;
  if (!Number.isInteger(first) || first < 1 || first > limits.maxFirst) {
    throw badUserInput(`\`first\` must be between 1 and ${limits.maxFirst}.`, 'first');
  }
  const offset = args.after ? decodeCursor(args.after) + 1 : 0;
  return { offset, first };
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/**
 * The upstream pages that cover a window: one when a page size between
 * `first` and the upstream maximum divides the offset, two otherwise.
 */
export function pagesFor({ offset, first }: Window, upstreamMaxPerPage: number): PageRequest[] {
  for (let perPage = first; perPage <= upstreamMaxPerPage; perPage++) {
    if (offset % perPage === 0) return [{ page: offset / perPage + 1, perPage }];
  }
  const page = Math.floor(offset / first) + 1;
  return [
    { page, perPage: first },
    { page: page + 1, perPage: first },
  ];
}

/** Reads a window through `fetchPage` and shapes the Relay connection. */
export async function paginate<T>(
  window: Window,
  upstreamMaxPerPage: number,
  fetchPage: (request: PageRequest) => Promise<Page<T>>,
): Promise<Connection<T>> {
  const requests = pagesFor(window, upstreamMaxPerPage);
  const pages = await Promise.all(requests.map(fetchPage));
  const first = requests[0]!;
  const skip = window.offset - (first.page - 1) * first.perPage;
  const all = pages.flatMap((p) => p.items);
  // A malformed item keeps its place (and its cursor), so offsets stay true.
  const nodes = all.slice(skip, skip + window.first) as (T | null)[];
  const last = pages[pages.length - 1]!;
  const lastRequest = requests[requests.length - 1]!;
  const totalCount = pages[0]!.meta?.totalCount ?? null;
  const hasNextPage = hasMore(window.offset + nodes.length, all.length > skip + window.first, last, lastRequest, totalCount);
  const edges = nodes.map((node, i) => ({ cursor: encodeCursor(window.offset + i), node }));
  return {
    edges,
    nodes,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: window.offset > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    totalCount,
  };
}

function hasMore(
  end: number,
  itemsLeftInFetched: boolean,
  last: Page<unknown>,
  lastRequest: PageRequest,
  totalCount: number | null,
): boolean {
  if (itemsLeftInFetched) return true;
  if (totalCount !== null) return end < totalCount;
  if (last.meta) return hasNextFromMeta(last.meta);
  // No meta (a plain upstream): a full page is the only hint that more may follow.
  return last.items.length === lastRequest.perPage;
}

function hasNextFromMeta(meta: PageMeta): boolean {
  if (meta.nextPage !== null) return true;
  return meta.totalPages !== null && meta.currentPage < meta.totalPages;
}
