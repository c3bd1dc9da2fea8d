/**
 * Relay cursor connections over the upstream's page/per_page pagination, with
 * cursors that survive rows being added or removed, and filters the gateway
 * checks itself (docs/graphql-contract.md, Connections).
 *
 * Order. The upstream lists newest first and its ids only grow, so a list is in
 * descending id order (docs/upstream.md, Operations; the event resume relies on
 * the same). The order is by id, not by `created_at`: that is what the list
 * itself follows even for an object stamped with an earlier time, and it
 * needs no parsing of the several timestamp forms the upstream sends.
 *
 * Cursor (keyset). A cursor holds the row's id (the anchor) and its position in
 * the list when it was read (a hint: where to start reading). The next page is
 * read from that position; every row whose id is not below the anchor's (the
 * anchor itself, and rows created since, which push it down the list) is
 * dropped. When the first row read is already past the anchor (rows above it
 * were deleted), the reader steps back until it sees a row at or before the
 * anchor, so nothing is skipped either.
 *
 * Filters. `keep` is the caller's filter as the gateway checks it on each row.
 * A row the upstream should have filtered out is dropped, and then the reader
 * reads on, in pages of the upstream's largest size, until it has `first` rows.
 * It looks for one row more than `first`: finding it is what `hasNextPage`
 * says, so with a filter that does not rest on the upstream's `meta`. Without
 * a filter, `meta` saying that rows follow the page stands for that row.
 * The reads of one connection are bounded (MAX_READS_PER_CONNECTION), besides
 * the operation's upstream-call budget.
 *
 * Malformed rows. A row the upstream sent that fails validation is its Error
 * (`ListItem`, src/upstream/params.ts) and keeps its place: graphql-js reports it
 * at the item's path, `null` there, and the other rows stand. When its id
 * field was sound (it failed on another field) it is placed, deduplicated
 * and given a cursor by that id like any row. Without one, it is placed by
 * the row before it in list order, and its cursor is a position (offset)
 * cursor. It is never filtered out (the caller sees its error rather than a
 * silent gap), and a filtered count that would include it is not given.
 */
import { GraphQLError } from 'graphql';
import type { Id, ListItem, Page, PageMeta } from './upstream/index.js';
import { UpstreamInvalidResponseError } from './upstream/index.js';
import { badUserInput, ErrorCode } from './errors.js';

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
}

export interface PaginationLimits {
  defaultFirst: number;
  maxFirst: number;
}

/** Where a page starts: after the row `id`, last seen at `position` (0-based) of the list. */
export interface Anchor {
  /** `null` for an offset cursor of the gateway's earlier releases: read from `position + 1`, no keyset check. */
  id: Id | null;
  position: number;
}

export interface Window {
  first: number;
  after: Anchor | null;
}

/**
 * Nodes are typed `T | null`, but a malformed row is its Error (see above);
 * the generated resolver types know no Error values, hence the type.
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

/** Upstream page reads one connection may make; past it the field fails (UPSTREAM_BUDGET_EXCEEDED, reason `filter_scan`). */
export const MAX_READS_PER_CONNECTION = 10;

const KEYSET_PREFIX = 'key:';
const OFFSET_PREFIX = 'offset:';

export function encodeCursor(anchor: { id: Id | null; position: number }): string {
  const text = anchor.id === null ? `${OFFSET_PREFIX}${anchor.position}` : `${KEYSET_PREFIX}${anchor.id}:${anchor.position}`;
  return Buffer.from(text).toString('base64url');
}

const wholeNumber = (text: string | undefined): number | null => {
  if (text === undefined || !/^\d{1,15}$/.test(text)) return null;
  return Number(text);
};

/** A cursor of this API, or BAD_USER_INPUT. Offset cursors of earlier releases are still read. */
export function decodeCursor(cursor: string): Anchor {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (text.startsWith(KEYSET_PREFIX)) {
    const [id, position] = text.slice(KEYSET_PREFIX.length).split(':');
    const anchorId = wholeNumber(id);
    const at = wholeNumber(position);
    if (anchorId !== null && anchorId > 0 && at !== null) return { id: anchorId, position: at };
  } else if (text.startsWith(OFFSET_PREFIX)) {
    const offset = wholeNumber(text.slice(OFFSET_PREFIX.length));
    if (offset !== null) return { id: null, position: offset };
  }
  throw badUserInput('`after` is not a cursor returned by this API.', 'after');
}

/** Validates `first`/`after`. */
export function toWindow(args: ConnectionArgs, limits: PaginationLimits): Window {
  const first = args.first ?? limits.defaultFirst;
  if (!Number.isInteger(first) || first < 1 || first > limits.maxFirst) {
    throw badUserInput(`\`first\` must be between 1 and ${limits.maxFirst}.`, 'first');
  }
  return { first, after: args.after ? decodeCursor(args.after) : null };
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/**
 * The one upstream page to read `count` rows from `position` on: the smallest
 * page size between `count` and the maximum whose page holds them all (for a
 * client paging forward with a fixed `first` there always is one), else the
 * page of the largest size that holds `position`, and the reader reads on.
 */
export function pageFor(position: number, count: number, upstreamMaxPerPage: number): PageRequest {
  const n = Math.min(count, upstreamMaxPerPage);
  for (let perPage = n; perPage <= upstreamMaxPerPage; perPage++) {
    if ((position % perPage) + n <= perPage) return { page: Math.floor(position / perPage) + 1, perPage };
  }
  return { page: Math.floor(position / upstreamMaxPerPage) + 1, perPage: upstreamMaxPerPage };
}

export type FetchPage<T> = (request: PageRequest) => Promise<Page<T>>;

export interface ReadOptions<T> {
  upstreamMaxPerPage: number;
  /** The caller's filter, checked on every row; absent when the caller gave none. */
  keep?: ((item: T) => boolean) | undefined;
  /** Defaults to MAX_READS_PER_CONNECTION. */
  maxReads?: number;
}

interface Row<T> {
  item: ListItem<T>;
  position: number;
}

/** The row's id: a malformed row's too when its id field was sound, else null. */
const idOf = <T extends { id: Id }>(row: Row<T>): Id | null => (isMalformed(row) ? ((row.item as UpstreamInvalidResponseError).itemId ?? null) : (row.item as T).id);
const isMalformed = <T>(row: Row<T>): boolean => row.item instanceof UpstreamInvalidResponseError;

/** Upstream reads of one connection: counted, and aware of where the list ends. */
class Reader<T extends { id: Id }> {
  private reads = 0;
  /** Position of the first row after the last forward read. */
  next = 0;
  exhausted = false;
  /** The last forward read's `meta` said that rows follow it (a full page alone does not say so). */
  metaSaysMore = false;
  totalCount: number | null | undefined = undefined;

  constructor(
    private readonly fetchPage: FetchPage<T>,
    private readonly spec: ReadOptions<T>,
  ) {}

  /** Rows from `position` on, at least one page's worth when the list has them. */
  async forward(position: number, count: number): Promise<Row<T>[]> {
    const request = pageFor(position, count, this.spec.upstreamMaxPerPage);
    const { rows, page } = await this.read(request);
    const end = request.page * request.perPage;
    this.next = end;
    this.exhausted = !moreAfter(page, request, end);
    this.metaSaysMore = page.meta !== null && !this.exhausted;
    return rows.filter((r) => r.position >= position);
  }

  /**
   * The rows just above `start` that may lie past the anchor: read back a page
   * at a time until a row at or before the anchor (or the top of the list).
   */
  async backTo(anchorId: Id, start: number): Promise<Row<T>[]> {
    const max = this.spec.upstreamMaxPerPage;
    const before: Row<T>[] = [];
    let low = start;
    while (low > 0) {
      const request = { page: Math.floor((low - 1) / max) + 1, perPage: max };
      const { rows } = await this.read(request);
      const above = rows.filter((r) => r.position < low);
      before.unshift(...above);
      low = (request.page - 1) * max;
      if (above.some((r) => (idOf(r) ?? 0) >= anchorId)) break;
    }
    return before;
  }

  private async read(request: PageRequest): Promise<{ rows: Row<T>[]; page: Page<T> }> {
    const limit = this.spec.maxReads ?? MAX_READS_PER_CONNECTION;
    if (this.reads >= limit) throw scanTooLong(limit);
    this.reads += 1;
    const page = await this.fetchPage(request);
    if (this.totalCount === undefined) this.totalCount = page.meta?.totalCount ?? null;
    const base = (request.page - 1) * request.perPage;
    return { rows: page.items.map((item, i) => ({ item, position: base + i })), page };
  }
}

function scanTooLong(limit: number): GraphQLError {
  return new GraphQLError(
    `This list read ${limit} upstream pages without filling the page (the upstream does not apply a filter given, or many objects were created since the cursor); ask for fewer items or narrow the filter.`,
    { extensions: { code: ErrorCode.UPSTREAM_BUDGET_EXCEEDED, limit, reason: 'filter_scan' } },
  );
}

/** Reads a window through `fetchPage` and shapes the Relay connection. */
export async function paginate<T extends { id: Id }>(
  window: Window,
  fetchPage: FetchPage<T>,
  spec: ReadOptions<NoInfer<T>>,
): Promise<Connection<T>> {
  const { first, after } = window;
  const anchorId = after?.id ?? null;
  // A keyset read starts at the anchor's own old place: seeing it again proves nothing above it was skipped.
  const start = after === null ? 0 : anchorId === null ? after.position + 1 : after.position;
  const reader = new Reader(fetchPage, spec);
  const kept: Row<T>[] = [];
  const seen = new Set<Id>();
  // A malformed row without an id is placed by the row before it in list order: below the
  // anchor when that row is the anchor or older, or when a read back found nothing at or above it.
  let previousId: Id | undefined;
  let anchorAbove = true;
  const take = (rows: Row<T>[]) => {
    for (const row of rows) {
      if (kept.length > first) return;
      const id = idOf(row);
      if (id === null) {
        const below = after === null || (anchorId === null ? row.position > after.position : previousId === undefined ? !anchorAbove : previousId <= anchorId);
        if (below) kept.push(row);
        continue;
      }
      previousId = id;
      if (seen.has(id)) continue;
      seen.add(id);
      if (anchorId !== null && id >= anchorId) continue;
      // A malformed row cannot be checked: it shows as its error rather than leave a silent gap.
      if (spec.keep && !isMalformed(row) && !spec.keep(row.item as T)) continue;
      kept.push(row);
    }
  };

  const rows = await reader.forward(start, first + 1 + (anchorId === null ? 0 : 1));
  const firstId = rows[0] ? idOf(rows[0]) : null;
  if (anchorId !== null && start > 0 && !(rows[0]?.position === start && firstId !== null && firstId >= anchorId)) {
    const back = await reader.backTo(anchorId, start);
    anchorAbove = back.some((r) => (idOf(r) ?? 0) >= anchorId);
    take(back);
  }
  take(rows);
  // Without a filter every later row would follow the page, so the upstream's meta may stand for the extra row.
  const nextByMeta = () => spec.keep === undefined && kept.length === first && reader.metaSaysMore;
  while (kept.length <= first && !reader.exhausted && !nextByMeta()) {
    take(await reader.forward(reader.next, spec.upstreamMaxPerPage));
  }
  const hasNext = hasNextPage(kept, first) || nextByMeta();

  const nodes = kept.slice(0, first);
  // A malformed row is its Error in `node`: graphql-js reports it at that path.
  const edges = nodes.map((row) => ({ cursor: encodeCursor({ id: idOf(row), position: row.position }), node: row.item as T | null }));
  return {
    edges,
    nodes: edges.map((edge) => edge.node),
    pageInfo: {
      hasNextPage: hasNext,
      hasPreviousPage: after !== null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    // A malformed row may or may not match the filter: a count that includes one is not known.
    totalCount: countOf(spec.keep !== undefined, after === null && reader.exhausted && !hasNext && !kept.some(isMalformed), kept.length, reader.totalCount),
  };
}

const hasNextPage = (kept: unknown[], first: number) => kept.length > first;

/**
 * The upstream's count, when the caller gave no filter. With a filter it may
 * be the count of rows the upstream did not filter (a page whose rows all
 * happen to match does not show it), so the answer has a count only when the
 * gateway saw the whole filtered list itself: the first page, and the list ended.
 */
function countOf(filtered: boolean, sawAll: boolean, kept: number, upstreamCount: number | null | undefined): number | null {
  if (!filtered) return upstreamCount ?? null;
  return sawAll ? kept : null;
}

/** Whether the list may go on after the rows `request` covered (up to `end`). */
function moreAfter(page: Page<unknown>, request: PageRequest, end: number): boolean {
  if (page.items.length < request.perPage) return false;
  const meta = page.meta;
  if (meta?.totalCount !== null && meta?.totalCount !== undefined) return end < meta.totalCount;
  if (meta) return hasNextFromMeta(meta);
  // No meta (a plain upstream): a full page is the only hint that more may follow.
  return true;
}

function hasNextFromMeta(meta: PageMeta): boolean {
  if (meta.nextPage !== null) return true;
  return meta.totalPages !== null && meta.currentPage < meta.totalPages;
}
