/**
 * Keyset pages over a list with malformed rows (an UpstreamInvalidResponseError
 * in place of the item, src/upstream/decode.ts): the row shows as its error,
 * in its place, and a scroll neither repeats nor loses it when rows are
 * created or deleted between pages.
 */
import { describe, expect, it } from 'vitest';
import { paginate, toWindow, type Connection } from '../../src/pagination.js';
import type { Page } from '../../src/upstream/api.js';
import { UpstreamInvalidResponseError } from '../../src/upstream/errors.js';

interface Item {
  id: number;
}
/** A number is a sound row; `X` a row malformed beyond its id; `X7` one malformed with a sound id 7. */
type Entry = number | `X${string}`;

const limits = { defaultFirst: 20, maxFirst: 100 };
const options = (keep?: (item: Item) => boolean) => ({ upstreamMaxPerPage: 100, ...(keep ? { keep } : {}) });

function listOf(entries: Entry[]) {
  let list = [...entries];
  const row = (entry: Entry) => {
    if (typeof entry === 'number') return { id: entry };
    const id = Number(entry.slice(1));
    return Object.assign(new UpstreamInvalidResponseError({ route: 'GET /v1/things', detail: 'thing failed validation', itemId: id > 0 ? id : undefined }), { tag: entry });
  };
  return {
    fetchPage: async ({ page, perPage }: { page: number; perPage: number }): Promise<Page<Item>> => {
      const totalPages = Math.ceil(list.length / perPage);
      return {
        items: list.slice((page - 1) * perPage, page * perPage).map(row),
        meta: { currentPage: page, perPage, totalPages, totalCount: list.length, nextPage: page < totalPages ? page + 1 : null },
      };
    },
    set: (next: Entry[]) => (list = next),
  };
}

const shown = (page: Connection<Item>) => page.nodes.map((n) => (n instanceof UpstreamInvalidResponseError ? (n as unknown as { tag: string }).tag : n!.id));
const first = (list: ReturnType<typeof listOf>, size: number, keep?: (item: Item) => boolean) => paginate(toWindow({ first: size }, limits), list.fetchPage, options(keep));
const next = (list: ReturnType<typeof listOf>, size: number, after: Connection<Item>) =>
  paginate(toWindow({ first: size, after: after.pageInfo.endCursor }, limits), list.fetchPage, options());

describe('malformed rows in keyset pages', () => {
  it('shows a malformed row once when rows are created above it between pages', async () => {
    const list = listOf([10, 'X', 8, 7, 6, 5, 4, 3, 2, 1]);
    const page1 = await first(list, 5);
    expect(shown(page1)).toEqual([10, 'X', 8, 7, 6]);
    list.set([15, 14, 13, 12, 11, 10, 'X', 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(shown(await next(list, 5, page1))).toEqual([5, 4, 3, 2, 1]);
  });

  it('does not lose a malformed row when rows above the cursor are deleted between pages', async () => {
    const list = listOf([10, 9, 8, 7, 6, 'X', 4, 3, 2, 1]);
    const page1 = await first(list, 5);
    expect(shown(page1)).toEqual([10, 9, 8, 7, 6]);
    list.set([8, 7, 6, 'X', 4, 3, 2, 1]);
    expect(shown(await next(list, 5, page1))).toEqual(['X', 4, 3, 2, 1]);
  });

  it('gives a malformed row with a sound id a keyset cursor: a page ending on it scrolls on without repeats or gaps', async () => {
    const list = listOf([10, 9, 8, 7, 'X6', 5, 4, 3, 2, 1]);
    const page1 = await first(list, 5);
    expect(shown(page1)).toEqual([10, 9, 8, 7, 'X6']);
    list.set([12, 11, 10, 9, 8, 7, 'X6', 5, 4, 3, 2, 1]);
    expect(shown(await next(list, 5, page1))).toEqual([5, 4, 3, 2, 1]);
    list.set([8, 7, 'X6', 5, 4, 3, 2, 1]);
    expect(shown(await next(list, 5, page1))).toEqual([5, 4, 3, 2, 1]);
  });

  it('shows a malformed row under a filter rather than hide it, and then gives no count', async () => {
    const list = listOf([10, 9, 'X', 7, 6]);
    const page = await first(list, 5, (item) => item.id > 8);
    expect(shown(page)).toEqual([10, 9, 'X']);
    expect(page.totalCount).toBeNull();
    const clean = listOf([10, 9, 8, 7, 6]);
    expect((await first(clean, 5, (item) => item.id > 8)).totalCount).toBe(2);
  });
});
