/**
 * Relay connections over the upstream's page/per_page: keyset cursors that survive rows added or removed, and
 * filters checked on each row (docs/graphql-contract.md, Connections; malformed rows: docs/architecture.md).
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

export interface Anchor {
  /** `null` for an offset cursor of the gateway's earlier releases: read from `position + 1`, no keyset check. */
  id: Id | null;
  position: number;
}

export interface Window {
  first: number;
  after: Anchor | null;
}

/** Nodes may be a malformed row's Error, which the generated resolver types do not know. */
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

/** Offset cursors of earlier releases are still read. */
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

/** The smallest page size that holds `count` rows from `position`, else the largest that holds `position` (read on). */
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
  keep?: ((item: T) => boolean) | undefined;
  maxReads?: number;
}

interface Row<T> {
  item: ListItem<T>;
  position: number;
}

const idOf = <T extends { id: Id }>(row: Row<T>): Id | null => (isMalformed(row) ? ((row.item as UpstreamInvalidResponseError).itemId ?? null) : (row.item as T).id);
const isMalformed = <T>(row: Row<T>): boolean => row.item instanceof UpstreamInvalidResponseError;

class Reader<T extends { id: Id }> {
  private reads = 0;
  next = 0;
  exhausted = false;
  /** A full page alone does not say that rows follow; `meta` does. */
  metaSaysMore = false;
  totalCount: number | null | undefined = undefined;

  constructor(
    private readonly fetchPage: FetchPage<T>,
    private readonly spec: ReadOptions<T>,
  ) {}

  async forward(position: number, count: number): Promise<Row<T>[]> {
    const request = pageFor(position, count, this.spec.upstreamMaxPerPage);
    const { rows, page } = await this.read(request);
    const end = request.page * request.perPage;
    this.next = end;
    this.exhausted = !moreAfter(page, request, end);
    this.metaSaysMore = page.meta !== null && !this.exhausted;
    return rows.filter((r) => r.position >= position);
  }

  /** Reads back a page at a time until a row at or before the anchor, so rows above deleted ones are not skipped. */
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
  // A malformed row without an id is placed by the row before it in list order.
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

/** With a filter the upstream's count may include rows it did not filter: a count only when the gateway saw them all. */
function countOf(filtered: boolean, sawAll: boolean, kept: number, upstreamCount: number | null | undefined): number | null {
  if (!filtered) return upstreamCount ?? null;
  return sawAll ? kept : null;
}

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
