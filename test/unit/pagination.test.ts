import { describe, expect, it } from 'vitest';
import { type Connection, decodeCursor, encodeCursor, MAX_READS_PER_CONNECTION, pageFor, paginate, toWindow, type Window } from '../../src/pagination.js';
import type { Page } from '../../src/upstream/api.js';

const limits = { defaultFirst: 20, maxFirst: 100 };
const legacyCursor = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64url');

interface Item {
  id: number;
  even: boolean;
}

/**
 * A fake upstream list serving page/per_page, newest first (ids descending),
 * that can grow and shrink between reads. `honours` says whether it applies
 * the filter (`even` items only) or ignores it as a strict server does.
 */
function upstreamOf(total: number, { withMeta = true, filter = false, honours = true } = {}) {
  let ids = Array.from({ length: total }, (_, i) => total - i);
  const calls: { page: number; perPage: number }[] = [];
  const listed = () => (filter && honours ? ids.filter((id) => id % 2 === 0) : ids);
  const fetchPage = async ({ page, perPage }: { page: number; perPage: number }): Promise<Page<Item>> => {
    calls.push({ page, perPage });
    const all = listed();
    const slice = all.slice((page - 1) * perPage, page * perPage).map((id) => ({ id, even: id % 2 === 0 }));
    const totalPages = Math.ceil(all.length / perPage);
    return {
      items: slice,
      meta: withMeta ? { currentPage: page, perPage, totalPages, totalCount: all.length, nextPage: page < totalPages ? page + 1 : null } : null,
    };
  };
  return {
    get ids() {
      return listed();
    },
    calls,
    fetchPage,
    /** New rows at the top, as creations during a scroll. */
    add(n: number) {
      const top = Math.max(0, ...ids);
      ids = [...Array.from({ length: n }, (_, i) => top + n - i), ...ids];
    },
    remove(...gone: number[]) {
      ids = ids.filter((id) => !gone.includes(id));
    },
  };
}

const options = (extra: { keep?: (item: Item) => boolean; maxReads?: number } = {}) => ({ upstreamMaxPerPage: 100, ...extra });
const keepEven = (item: Item) => item.even;

async function walk(upstream: ReturnType<typeof upstreamOf>, first: number, between: (page: number) => void = () => {}, extra = {}) {
  const seen: number[] = [];
  let after: string | null = null;
  for (let i = 0; i < 50; i++) {
    const conn: Connection<Item> = await paginate(toWindow({ first, after }, limits), upstream.fetchPage, options(extra));
    seen.push(...conn.nodes.map((n) => n!.id));
    if (!conn.pageInfo.hasNextPage) break;
    after = conn.pageInfo.endCursor;
    between(i + 1);
  }
  return seen;
}

describe('cursors', () => {
  it('round-trips an anchor (id and position) through an opaque cursor', () => {
    const cursor = encodeCursor({ id: 4711, position: 42 });
    expect(decodeCursor(cursor)).toEqual({ id: 4711, position: 42 });
    expect(cursor).not.toContain('4711');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('still reads an offset cursor of earlier releases, as a position without an anchor', () => {
    expect(decodeCursor(legacyCursor(9))).toEqual({ id: null, position: 9 });
  });

  it.each([
    '',
    'bogus',
    legacyCursor(-1),
    Buffer.from('offset:1.5').toString('base64url'),
    Buffer.from('key:0:3').toString('base64url'),
    Buffer.from('key:12').toString('base64url'),
    Buffer.from('key:12:-1').toString('base64url'),
    Buffer.from('key:1e3:4').toString('base64url'),
  ])('refuses the cursor %j', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(/not a cursor/);
  });
});

describe('toWindow', () => {
  it('applies the default page size', () => {
    expect(toWindow({}, limits)).toEqual({ first: 20, after: null });
  });

  it.each([0, -1, 101, 1.5])('refuses first: %d as BAD_USER_INPUT', (first) => {
    expect(() => toWindow({ first }, limits)).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) }));
  });

  it('starts after the cursor', () => {
    expect(toWindow({ first: 5, after: encodeCursor({ id: 7, position: 9 }) }, limits)).toEqual({ first: 5, after: { id: 7, position: 9 } });
  });
});

describe('pageFor', () => {
  it.each([
    [0, 10, { page: 1, perPage: 10 }],
    [20, 10, { page: 3, perPage: 10 }],
    // A page of 11 starting at 0 holds [4, 11).
    [4, 7, { page: 1, perPage: 11 }],
    // 9 % 8 = 1, and [9, 16) fits the second page of 8.
    [9, 7, { page: 2, perPage: 8 }],
  ])('reads %d rows from %d with one page', (position, count, page) => {
    expect(pageFor(position, count, 100)).toEqual(page);
  });

  it('falls back to the largest page holding the position when none holds the whole window', () => {
    expect(pageFor(101, 100, 100)).toEqual({ page: 2, perPage: 100 });
    expect(pageFor(150, 102, 100)).toEqual({ page: 2, perPage: 100 });
  });
});

describe('paginate', () => {
  it('walks a list forward without gaps or repeats, one upstream read per page', async () => {
    const upstream = upstreamOf(23);
    const seen: number[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const conn: Connection<Item> = await paginate(toWindow({ first: 5, after }, limits), upstream.fetchPage, options());
      seen.push(...conn.nodes.map((n) => n!.id));
      expect(conn.totalCount).toBe(23);
      expect(conn.pageInfo.hasPreviousPage).toBe(i > 0);
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(upstream.ids);
    expect(upstream.calls).toHaveLength(5);
  });

  it('reads one upstream page per page of 50 when the upstream sends meta', async () => {
    const upstream = upstreamOf(300);
    const seen = await walk(upstream, 50);
    expect(seen).toEqual(upstream.ids);
    expect(upstream.calls).toHaveLength(6);
  });

  it('reads a window past the largest page across two pages (an offset cursor)', async () => {
    const upstream = upstreamOf(300);
    const conn = await paginate({ first: 100, after: { id: null, position: 100 } }, upstream.fetchPage, options());
    expect(conn.nodes.map((n) => n!.id)).toEqual(upstream.ids.slice(101, 201));
    expect(conn.pageInfo.hasNextPage).toBe(true);
    expect(upstream.calls).toHaveLength(2);
  });

  it('without meta, knows the end from a short page and leaves totalCount unknown', async () => {
    const upstream = upstreamOf(7, { withMeta: false });
    const first = await paginate({ first: 5, after: null }, upstream.fetchPage, options());
    expect(first.totalCount).toBeNull();
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await paginate(toWindow({ first: 5, after: first.pageInfo.endCursor }, limits), upstream.fetchPage, options());
    expect(second.nodes.map((n) => n!.id)).toEqual([2, 1]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it('says hasNextPage only when a row follows: a list of exactly `first` rows has no next page', async () => {
    const conn = await paginate({ first: 5, after: null }, upstreamOf(5, { withMeta: false }).fetchPage, options());
    expect(conn.nodes).toHaveLength(5);
    expect(conn.pageInfo.hasNextPage).toBe(false);
  });

  it('answers an empty page with null cursors', async () => {
    const conn = await paginate({ first: 5, after: null }, upstreamOf(0).fetchPage, options());
    expect(conn).toMatchObject({ nodes: [], edges: [], pageInfo: { hasNextPage: false, startCursor: null, endCursor: null }, totalCount: 0 });
  });
});

describe('keyset cursors while the list changes', () => {
  it('repeats no row when rows are created between pages', async () => {
    const upstream = upstreamOf(23);
    const original = upstream.ids;
    const seen = await walk(upstream, 5, () => upstream.add(3));
    expect(seen).toEqual(original);
  });

  it('repeats no row when more rows are created than a page holds', async () => {
    const upstream = upstreamOf(30);
    const original = upstream.ids;
    const seen = await walk(upstream, 5, (page) => page === 1 && upstream.add(150));
    expect(seen).toEqual(original);
  });

  it('skips no row when rows above the anchor are deleted between pages', async () => {
    const upstream = upstreamOf(23);
    const seen = await walk(upstream, 5, (page) => page === 1 && upstream.remove(23, 22, 21));
    expect(seen).toEqual(upstreamOf(23).ids);
  });

  it('skips no row when the anchor itself is deleted', async () => {
    const upstream = upstreamOf(23);
    const first = await paginate({ first: 5, after: null }, upstream.fetchPage, options());
    upstream.remove(first.nodes[4]!.id);
    const next = await paginate(toWindow({ first: 5, after: first.pageInfo.endCursor }, limits), upstream.fetchPage, options());
    expect(next.nodes.map((n) => n!.id)).toEqual([18, 17, 16, 15, 14]);
  });

  it('skips no row when more rows are deleted than a page holds', async () => {
    const upstream = upstreamOf(300);
    const first = await paginate({ first: 100, after: null }, upstream.fetchPage, options());
    const second = await paginate(toWindow({ first: 100, after: first.pageInfo.endCursor }, limits), upstream.fetchPage, options());
    upstream.remove(...first.nodes.map((n) => n!.id), ...second.nodes.slice(0, 50).map((n) => n!.id));
    const third = await paginate(toWindow({ first: 100, after: second.pageInfo.endCursor }, limits), upstream.fetchPage, options());
    expect(third.nodes.map((n) => n!.id)).toEqual(upstreamOf(300).ids.slice(200, 300));
  });
});

describe('filters the upstream may ignore', () => {
  it('keeps only matching rows and fills `first` by reading on when the upstream ignores the filter', async () => {
    const upstream = upstreamOf(23, { filter: true, honours: false });
    const conn = await paginate({ first: 5, after: null }, upstream.fetchPage, options({ keep: keepEven }));
    expect(conn.nodes.map((n) => n!.id)).toEqual([22, 20, 18, 16, 14]);
    expect(conn.pageInfo.hasNextPage).toBe(true);
    // The upstream counted rows it did not filter: that is not the answer's count.
    expect(conn.totalCount).toBeNull();
  });

  it('walks every matching row exactly once, in order, with hasNextPage right at the end', async () => {
    const upstream = upstreamOf(23, { filter: true, honours: false });
    const seen = await walk(upstream, 4, () => {}, { keep: keepEven });
    expect(seen).toEqual(upstream.ids.filter((id) => id % 2 === 0));
  });

  it('reads as little when the upstream filters, but does not pass on a total it cannot check', async () => {
    const upstream = upstreamOf(23, { filter: true, honours: true });
    const conn = await paginate({ first: 5, after: null }, upstream.fetchPage, options({ keep: keepEven }));
    expect(conn.nodes.map((n) => n!.id)).toEqual([22, 20, 18, 16, 14]);
    expect(conn.totalCount).toBeNull();
    expect(upstream.calls).toHaveLength(1);
  });

  it('gives no total when every row read matches but the upstream ignored the filter', async () => {
    // The newest 6 rows all match: nothing on the page shows that the upstream's count (23) is unfiltered.
    const upstream = upstreamOf(23, { filter: true, honours: false });
    const conn = await paginate({ first: 5, after: null }, upstream.fetchPage, options({ keep: (item) => item.id > 12 }));
    expect(conn.nodes.map((n) => n!.id)).toEqual([23, 22, 21, 20, 19]);
    expect(conn.totalCount).toBeNull();
  });

  it('counts the answer itself when it saw the whole filtered list', async () => {
    const upstream = upstreamOf(23, { filter: true, honours: false });
    const conn = await paginate({ first: 20, after: null }, upstream.fetchPage, options({ keep: keepEven }));
    expect(conn.nodes).toHaveLength(11);
    expect(conn.totalCount).toBe(11);
    expect(conn.pageInfo.hasNextPage).toBe(false);
  });

  it('gives up with UPSTREAM_BUDGET_EXCEEDED (reason filter_scan) past its reads', async () => {
    const upstream = upstreamOf(5000, { filter: true, honours: false });
    const none = () => false;
    await expect(paginate({ first: 5, after: null }, upstream.fetchPage, options({ keep: none }))).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_BUDGET_EXCEEDED', limit: MAX_READS_PER_CONNECTION, reason: 'filter_scan' },
    });
    expect(upstream.calls).toHaveLength(MAX_READS_PER_CONNECTION);
  });

  it('with a filter, does not take the upstream meta for a next matching row', async () => {
    // The newest five rows match and no other does; the upstream says rows follow, but none matches.
    const upstream = upstreamOf(23, { filter: true, honours: false });
    const conn = await paginate({ first: 5, after: null }, upstream.fetchPage, options({ keep: (item) => item.id > 18 }));
    expect(conn.nodes.map((n) => n!.id)).toEqual([23, 22, 21, 20, 19]);
    expect(conn.pageInfo.hasNextPage).toBe(false);
    expect(conn.totalCount).toBe(5);
  });

  it('finds a match after rows that do not match, and ends when the list ends', async () => {
    const upstream = upstreamOf(250, { filter: true, honours: false });
    const window: Window = { first: 3, after: null };
    const conn = await paginate(window, upstream.fetchPage, options({ keep: (item) => item.id === 7 }));
    expect(conn.nodes.map((n) => n!.id)).toEqual([7]);
    expect(conn.pageInfo.hasNextPage).toBe(false);
  });
});
