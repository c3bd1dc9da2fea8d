/** Whether the upstream applied the page asked for: more rows than per_page, or another page than asked. */
import { describe, expect, it } from 'vitest';
import { ignoredParameter } from '../../../src/upstream/applied.js';
import type { Page, PageMeta } from '../../../src/upstream/params.js';

const meta = (currentPage: number): PageMeta => ({ currentPage, perPage: 2, totalPages: 3, totalCount: 6, nextPage: currentPage < 3 ? currentPage + 1 : null });
const page = (rows: number, m: PageMeta | null): Page<number> => ({ items: Array.from({ length: rows }, (_, i) => i), meta: m });

describe('ignoredParameter', () => {
  it('is null when the answer is the page asked for, or nothing was asked', () => {
    expect(ignoredParameter(page(2, meta(2)), { page: 2, perPage: 2 })).toBeNull();
    expect(ignoredParameter(page(1, meta(3)), { page: 3, perPage: 2 })).toBeNull();
    expect(ignoredParameter(page(50, meta(1)), {})).toBeNull();
  });

  it('names per_page when more rows came than asked for', () => {
    expect(ignoredParameter(page(3, meta(1)), { perPage: 2 })).toBe('per_page');
    expect(ignoredParameter(page(3, meta(1)), { page: 1, perPage: 2 })).toBe('per_page');
  });

  it('names page when the answer says it is another page', () => {
    expect(ignoredParameter(page(2, meta(1)), { page: 2, perPage: 2 })).toBe('page');
  });

  it('takes an empty page or one without meta as applied: nothing wrong is served', () => {
    expect(ignoredParameter(page(0, meta(1)), { page: 4 })).toBeNull();
    expect(ignoredParameter(page(2, null), { page: 2 })).toBeNull();
  });
});
