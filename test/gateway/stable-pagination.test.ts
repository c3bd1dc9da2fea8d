import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

interface Conn {
  nodes: { id: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * Cursors stay true while the list changes under a scroll: rows created
 * between two pages (they go to the top of the newest-first list) are not
 * repeated on the next page, and rows deleted above the cursor make none skipped.
 */
describe.each(['lenient', 'strict'] as const)('stable pagination, %s list parameters', (listParams) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ emulator: { listParams } });
  });
  afterAll(() => stack.stop());

  async function page(field: string, key: string, first: number, after: string | null, filter?: Record<string, unknown>) {
    const filterArg = filter ? `, filter: ${JSON.stringify(filter).replace(/"([a-zA-Z]+)":/g, '$1:').replace(/"([A-Z]+)"/g, '$1')}` : '';
    const res = await stack.gql<Record<string, Conn>>(
      `query ($first: Int, $after: String) { list: ${field}(first: $first, after: $after${filterArg}) { nodes { id } pageInfo { hasNextPage endCursor } } }`,
      { first, after },
      key,
    );
    expect(res.errors).toBeUndefined();
    return res.data!.list!;
  }

  /** Pages to the end with `first` per page, running `between` after each page. */
  async function scroll(field: string, key: string, first: number, between: (n: number) => Promise<void>, filter?: Record<string, unknown>) {
    const ids: string[] = [];
    let after: string | null = null;
    for (let n = 1; n < 30; n++) {
      const conn: Conn = await page(field, key, first, after, filter);
      ids.push(...conn.nodes.map((node) => node.id));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
      await between(n);
    }
    return ids;
  }

  it.each([
    ['transactions', (make: ReturnType<typeof factories>, i: number) => make.transaction({ amount: 100 + i })],
    ['payouts', (make: ReturnType<typeof factories>, i: number) => make.payout({ amount: 100 + i })],
    ['customers', (make: ReturnType<typeof factories>, i: number) => make.customer({ firstname: `C${i}` })],
  ] as const)('%s: three rows created after page 1 repeat nothing on page 2, and skip nothing', async (field, create) => {
    const key = newKey(`stable-${field}`);
    const make = factories(stack.emulator, key);
    for (let i = 0; i < 12; i++) await create(make, i);
    const original = (await page(field, key, 100, null)).nodes.map((n) => n.id);
    expect(original).toHaveLength(12);

    const first = await page(field, key, 5, null);
    for (let i = 0; i < 3; i++) await create(make, 100 + i);
    const second = await page(field, key, 5, first.pageInfo.endCursor);
    const seen = [...first.nodes, ...second.nodes].map((n) => n.id);
    expect(seen).toEqual(original.slice(0, 10));
    expect(second.pageInfo.hasNextPage).toBe(true);

    // Page 3 reaches the end: the union of the pages is the original ordering.
    const rest = await page(field, key, 5, second.pageInfo.endCursor);
    expect([...seen, ...rest.nodes.map((n) => n.id)]).toEqual(original);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });

  it('a whole scroll with creations after every page, and one with deletions above the cursor', async () => {
    const make = async (key: string) => {
      const rest = factories(stack.emulator, key);
      const created: number[] = [];
      for (let i = 0; i < 17; i++) created.push((await rest.transaction({ amount: 100 + i })).id);
      return { key, rest, original: created.slice().reverse().map(String) };
    };

    const growing = await make(newKey('stable-created'));
    const withCreations = await scroll('transactions', growing.key, 4, async () => {
      for (let i = 0; i < 3; i++) await growing.rest.transaction({ amount: 900 + i });
    });
    expect(withCreations).toEqual(growing.original);

    // Deleting the rows already shown moves the rest up the list: none of them is skipped.
    const shrinking = await make(newKey('stable-deleted'));
    const withDeletions = await scroll('transactions', shrinking.key, 4, async (n) => {
      if (n > 2) return;
      for (const id of shrinking.original.slice((n - 1) * 4, n * 4)) await shrinking.rest.rest('DELETE', `/v1/transactions/${id}`);
    });
    expect(withDeletions).toEqual(shrinking.original);
  });

  it('a filtered scroll stays right while rows are created', async () => {
    const key = newKey('stable-filtered');
    const make = factories(stack.emulator, key);
    const ids: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t = await make.transaction({ amount: 100 + i });
      if (i % 3 === 0) await make.rest('PUT', `/v1/transactions/${t.id}`, { status: 'canceled' });
      ids.push(t.id);
    }
    const canceled = ids.filter((_, i) => i % 3 === 0).reverse().map(String);
    const seen = await scroll(
      'transactions',
      key,
      2,
      async () => {
        const t = await make.transaction({ amount: 5 });
        await make.rest('PUT', `/v1/transactions/${t.id}`, { status: 'canceled' });
      },
      { status: 'CANCELED' },
    );
    expect(seen).toEqual(canceled);
  });

  it('still reads an offset cursor of earlier releases', async () => {
    const key = newKey('stable-legacy');
    const make = factories(stack.emulator, key);
    const created: number[] = [];
    for (let i = 0; i < 6; i++) created.push((await make.transaction({ amount: 100 + i })).id);
    const legacy = Buffer.from('offset:1').toString('base64url');
    const conn = await page('transactions', key, 3, legacy);
    expect(conn.nodes.map((n) => n.id)).toEqual(created.slice().reverse().slice(2, 5).map(String));
  });
});
