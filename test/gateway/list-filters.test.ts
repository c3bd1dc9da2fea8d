import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { startStack, type GqlResult, type Stack } from '../support/harness.js';

type Row = RestObject & Record<string, unknown>;

interface Conn {
  totalCount: number | null;
  nodes: { id: string }[];
  edges: { cursor: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * Every filter of the schema, over the seeded demo account, against an
 * emulator that applies the filters (lenient) and one that ignores them as a
 * server that does not know them would (strict). The expected rows are
 * computed here from the unfiltered lists; the answer must be the same in
 * both modes, paged without repeats or gaps.
 */
describe.each(['lenient', 'strict'] as const)('filters against an emulator with %s list parameters', (listParams) => {
  let stack: Stack;
  let key: string;
  const rows: Record<'transactions' | 'payouts' | 'customers' | 'events', Row[]> = { transactions: [], payouts: [], customers: [], events: [] };

  /** Every row of a list, newest first, read straight from the emulator. */
  async function everything(plural: keyof typeof rows): Promise<Row[]> {
    const make = factories(stack.emulator, key);
    const all: Row[] = [];
    for (let page = 1; ; page++) {
      const body = (await make.rest('GET', `/v1/${plural}?page=${page}&per_page=100`)) as Record<string, unknown>;
      const items = body[`v1/${plural}`] as Row[];
      all.push(...items);
      if (items.length < 100) return all;
    }
  }

  beforeAll(async () => {
    stack = await startStack({ emulator: { listParams } });
    key = stack.emulator.seedDemo();
    for (const plural of Object.keys(rows) as (keyof typeof rows)[]) rows[plural] = await everything(plural);
  });
  afterAll(() => stack.stop());

  /** Walks a connection with `first` per page; every page but the last says hasNextPage. */
  async function walk(field: string, filterType: string, filter: Record<string, unknown>, first = 4) {
    const ids: string[] = [];
    const totals: (number | null)[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 60; guard++) {
      const res: GqlResult<Record<string, Conn>> = await stack.gql<Record<string, Conn>>(
        `query ($first: Int, $after: String, $filter: ${filterType}) {
           list: ${field}(first: $first, after: $after, filter: $filter) { totalCount nodes { id } edges { cursor } pageInfo { hasNextPage endCursor } } }`,
        { first, after, filter },
        key,
      );
      expect(res.errors).toBeUndefined();
      const conn = res.data!.list!;
      totals.push(conn.totalCount);
      ids.push(...conn.nodes.map((n) => n.id));
      if (!conn.pageInfo.hasNextPage) break;
      // A page that says more follows is never empty.
      expect(conn.nodes.length).toBe(first);
      after = conn.pageInfo.endCursor;
    }
    expect(new Set(ids).size).toBe(ids.length);
    return { ids, totals };
  }

  const idsOf = (list: Row[]) => list.map((r) => String(r.id));
  const at = (r: Row) => Date.parse(String(r.created_at));

  /**
   * The answer is the expected rows, in both modes. A total is never wrong:
   * with a filter it is the count when one page held the whole answer, else null.
   */
  async function expectFiltered(field: string, filterType: string, filter: Record<string, unknown>, expected: Row[]) {
    expect(expected.length).toBeGreaterThan(0);
    const { ids, totals } = await walk(field, filterType, filter);
    expect(ids).toEqual(idsOf(expected));
    for (const total of totals) expect([expected.length, null]).toContain(total);
    const whole = await walk(field, filterType, filter, 100);
    expect(whole.ids).toEqual(idsOf(expected));
    expect(whole.totals).toEqual([expected.length]);
  }

  it('transactions by each status', async () => {
    for (const status of ['PENDING', 'APPROVED', 'DECLINED', 'CANCELED', 'REFUNDED', 'TRANSFERRED']) {
      await expectFiltered('transactions', 'TransactionFilter', { status }, rows.transactions.filter((t) => t.status === status.toLowerCase()));
    }
  });

  it('transactions by customer, by a createdAt range with both bounds on rows, and all together', async () => {
    const customerId = rows.transactions[3]!.customer_id as number;
    const byCustomer = rows.transactions.filter((t) => t.customer_id === customerId);
    await expectFiltered('transactions', 'TransactionFilter', { customerId: String(customerId) }, byCustomer);

    const from = String(rows.transactions[20]!.created_at);
    const to = String(rows.transactions[5]!.created_at);
    const inRange = rows.transactions.filter((t) => at(t) >= Date.parse(from) && at(t) <= Date.parse(to));
    expect(inRange).toHaveLength(16);
    await expectFiltered('transactions', 'TransactionFilter', { createdAt: { from, to } }, inRange);
    await expectFiltered('transactions', 'TransactionFilter', { createdAt: { from } }, rows.transactions.filter((t) => at(t) >= Date.parse(from)));

    const status = String(rows.transactions[3]!.status);
    await expectFiltered(
      'transactions',
      'TransactionFilter',
      { status: status.toUpperCase(), customerId: String(customerId), createdAt: { to: String(rows.transactions[3]!.created_at) } },
      byCustomer.filter((t) => t.status === status && at(t) <= at(rows.transactions[3]!)),
    );
  });

  it('payouts by status, customer and createdAt', async () => {
    for (const status of ['PENDING', 'SCHEDULED', 'STARTED', 'SENT', 'FAILED']) {
      await expectFiltered('payouts', 'PayoutFilter', { status }, rows.payouts.filter((p) => p.status === status.toLowerCase()));
    }
    const customerId = rows.payouts[0]!.customer_id as number;
    await expectFiltered('payouts', 'PayoutFilter', { customerId: String(customerId) }, rows.payouts.filter((p) => p.customer_id === customerId));
    const to = String(rows.payouts[6]!.created_at);
    await expectFiltered('payouts', 'PayoutFilter', { createdAt: { to } }, rows.payouts.filter((p) => at(p) <= Date.parse(to)));
  });

  it('customers by e-mail, free text and createdAt', async () => {
    const kofi = rows.customers.find((c) => c.firstname === 'Kofi')!;
    await expectFiltered('customers', 'CustomerFilter', { email: String(kofi.email) }, [kofi]);
    const text = (c: Row) => [c.firstname, c.lastname, c.email, `${c.firstname} ${c.lastname}`].map((v) => String(v).toLowerCase());
    for (const query of ['ou', 'KOFI MENSAH', 'demo.example']) {
      await expectFiltered('customers', 'CustomerFilter', { query }, rows.customers.filter((c) => text(c).some((t) => t.includes(query.toLowerCase()))));
    }
    const from = String(rows.customers[7]!.created_at);
    await expectFiltered('customers', 'CustomerFilter', { createdAt: { from } }, rows.customers.filter((c) => at(c) >= Date.parse(from)));
  });

  it('events by type and by object', async () => {
    await expectFiltered('events', 'EventFilter', { type: 'transaction.approved' }, rows.events.filter((e) => e.type === 'transaction.approved'));
    const objectId = rows.transactions[0]!.id;
    const ofObject = rows.events.filter((e) => e.object_id === objectId);
    await expectFiltered('events', 'EventFilter', { objectId: String(objectId) }, ofObject);
    await expectFiltered('events', 'EventFilter', { type: 'transaction.created', objectId: String(objectId) }, ofObject.filter((e) => e.type === 'transaction.created'));
  });

  it('a status history lists only its own object events', async () => {
    const refunded = rows.transactions.find((t) => t.status === 'refunded')!;
    const res = await stack.gql<{ transaction: { statusHistory: { status: string; event: { objectId: string } | null }[] } }>(
      'query ($id: ID!) { transaction(id: $id) { statusHistory { status event { objectId } } } }',
      { id: String(refunded.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    const history = res.data!.transaction.statusHistory;
    expect(history.map((h) => h.status)).toEqual(['PENDING', 'APPROVED', 'REFUNDED']);
    // Each step has its event (created, approved, refunded), and every one is this object's.
    expect(history.map((h) => h.event?.objectId)).toEqual([String(refunded.id), String(refunded.id), String(refunded.id)]);
  });
});
