import { describe, expect, it } from 'vitest';
import { type Connection, decodeCursor, encodeCursor, pagesFor, paginate, toWindow } from '../../src/pagination.js';
import type { Page } from '../../src/upstream/api.js';

const limits = { defaultFirst: 20, maxFirst: 100 };

/** A fake upstream list of `total` items (ids total..1, newest first) serving page/per_page. */
function upstreamOf(total: number, withMeta = true) {
  const items = Array.from({ length: total }, (_, i) => total - i);
  const calls: { page: number; perPage: number }[] = [];
  const fetchPage = async ({ page, perPage }: { page: number; perPage: number }): Promise<Page<number>> => {
    calls.push({ page, perPage });
    const slice = items.slice((page - 1) * perPage, page * perPage);
    const totalPages = Math.ceil(total / perPage);
    return {
      items: slice,
      meta: withMeta
        ? { currentPage: page, perPage, totalPages, totalCount: total, nextPage: page < totalPages ? page + 1 : null }
        : null,
    };
  };
  return { items, calls, fetchPage };
}

describe('cursors', () => {
  it('round-trips an offset through an opaque cursor', () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    expect(encodeCursor(42)).not.toContain('42');
  });

  it.each(['', 'bogus', encodeCursor(-1), Buffer.from('offset:1.5').toString('base64url')])('refuses the cursor %j', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(/not a cursor/);
  });
});

describe('toWindow', () => {
  it('applies the default page size', () => {
    expect(toWindow({}, limits)).toEqual({ offset: 0, first: 20 });
  });

  it.each([0, -1, 101, 1.5])('refuses first: %d as BAD_USER_INPUT', (first) => {
    expect(() => toWindow({ first }, limits)).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) }));
  });

  it('starts after the cursor', () => {
    expect(toWindow({ first: 5, after: encodeCursor(9) }, limits)).toEqual({ offset: 10, first: 5 });
  });
});

describe('pagesFor', () => {
  it.each([
    [{ offset: 0, first: 10 }, [{ page: 1, perPage: 10 }]],
    [{ offset: 20, first: 10 }, [{ page: 3, perPage: 10 }]],
    // 7 is not a multiple of 5, but a page of 7 covers [7, 12).
    [{ offset: 7, first: 5 }, [{ page: 2, perPage: 7 }]],
  ])('reads %j with one page', (window, pages) => {
    expect(pagesFor(window, 100)).toEqual(pages);
  });

  it('falls back to the two pages of size first that cover an unaligned window', () => {
    expect(pagesFor({ offset: 101, first: 100 }, 100)).toEqual([
      { page: 2, perPage: 100 },
      { page: 3, perPage: 100 },
    ]);
  });
});

describe('paginate', () => {
  it('walks a list forward without gaps or repeats', async () => {
    const upstream = upstreamOf(23);
    const seen: number[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const conn: Connection<number> = await paginate(toWindow({ first: 5, after }, limits), 100, upstream.fetchPage);
      seen.push(...(conn.nodes as number[]));
      expect(conn.totalCount).toBe(23);
      expect(conn.pageInfo.hasPreviousPage).toBe(i > 0);
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(upstream.items);
    expect(upstream.calls).toHaveLength(5);
  });

  it('reads an unaligned window across two pages', async () => {
    const upstream = upstreamOf(300);
    const conn = await paginate({ offset: 101, first: 100 }, 100, upstream.fetchPage);
    expect(conn.nodes).toEqual(upstream.items.slice(101, 201));
    expect(conn.pageInfo.hasNextPage).toBe(true);
  });

  it('without meta, takes a short page as the end and leaves totalCount unknown', async () => {
    const upstream = upstreamOf(7, false);
    const first = await paginate({ offset: 0, first: 5 }, 100, upstream.fetchPage);
    expect(first.totalCount).toBeNull();
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await paginate({ offset: 5, first: 5 }, 100, upstream.fetchPage);
    expect(second.nodes).toEqual([2, 1]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it('answers an empty page with null cursors', async () => {
    const conn = await paginate({ offset: 0, first: 5 }, 100, upstreamOf(0).fetchPage);
    expect(conn).toMatchObject({ nodes: [], edges: [], pageInfo: { hasNextPage: false, startCursor: null, endCursor: null }, totalCount: 0 });
  });
});
