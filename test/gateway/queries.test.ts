import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type GqlResult, type Stack } from '../support/harness.js';

// Every response style, with list filters applied by the emulator (lenient) or ignored as by a server that does not know them (strict).
const modes = (['enveloped', 'plain'] as const).flatMap((style) => (['lenient', 'strict'] as const).map((list) => [style, list] as const));

describe.each(modes)('queries against an emulator answering %s, with %s list parameters', (responseStyle, listParams) => {
  let stack: Stack;
  const key = newKey('queries');
  let customer: RestObject;
  let transaction: RestObject;
  let payout: RestObject;

  beforeAll(async () => {
    stack = await startStack({ emulator: { responseStyle, listParams } });
    const make = factories(stack.emulator, key);
    customer = await make.customer({ firstname: 'Kofi', lastname: 'Annan' });
    transaction = await make.transaction({ amount: 2500, customer: { id: customer.id } });
    payout = await make.payout({ amount: 700, customer: { id: customer.id } });
  });
  afterAll(() => stack.stop());

  it('reads a transaction by id with its customer and currency', async () => {
    const res = await stack.gql<{ transaction: Record<string, unknown> }>(
      `query ($id: ID!) { transaction(id: $id) { id amount status isPaid mode createdAt
          customer { id fullName email } currency { iso code name modes default } } }`,
      { id: String(transaction.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.transaction).toMatchObject({
      id: String(transaction.id),
      amount: 2500,
      status: 'PENDING',
      isPaid: false,
      customer: { id: String(customer.id), fullName: 'Kofi Annan' },
      currency: { iso: 'XOF', code: 952, default: true },
    });
  });

  it('lists transactions newest first as a Relay connection with totalCount', async () => {
    const res = await stack.gql<{ transactions: { totalCount: number | null; nodes: { id: string }[]; edges: { cursor: string }[]; pageInfo: Record<string, unknown> } }>(
      '{ transactions(first: 10) { totalCount nodes { id } edges { cursor } pageInfo { hasNextPage hasPreviousPage endCursor } } }',
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    const conn = res.data!.transactions;
    expect(conn.nodes.map((n) => n.id)).toContain(String(transaction.id));
    expect(conn.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    // A plain upstream sends no meta, so the total is unknown there.
    expect(conn.totalCount).toBe(responseStyle === 'enveloped' ? conn.nodes.length : null);
  });

  it('filters transactions by status and customer', async () => {
    const res = await stack.gql<{ transactions: { nodes: { id: string }[] } }>(
      `query ($c: ID!) { transactions(filter: { status: PENDING, customerId: $c }) { nodes { id } } }`,
      { c: String(customer.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.transactions.nodes).toEqual([{ id: String(transaction.id) }]);
  });

  it('applies each connection its own filter: customers by e-mail, transactions and payouts by customer, events by object', async () => {
    const filtersKey = newKey('filters');
    const make = factories(stack.emulator, filtersKey);
    const [a, b] = [await make.customer(), await make.customer()];
    const txOfA = await make.transaction({ customer: { id: a.id } });
    await make.transaction({ customer: { id: b.id } });
    const payoutOfB = await make.payout({ customer: { id: b.id } });
    await make.payout({ customer: { id: a.id } });
    type Ids = { nodes: { id: string }[] };
    const res = await stack.gql<{ customers: Ids; transactions: Ids; payouts: Ids; events: { nodes: { objectId: string }[] } }>(
      `query ($a: ID!, $b: ID!, $email: EmailAddress!, $tx: ID!) {
         customers(filter: { email: $email }) { nodes { id } }
         transactions(filter: { customerId: $a }) { nodes { id } }
         payouts(filter: { customerId: $b }) { nodes { id } }
         events(filter: { objectId: $tx }) { nodes { objectId } } }`,
      { a: String(a.id), b: String(b.id), email: b.email, tx: String(txOfA.id) },
      filtersKey,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.customers.nodes).toEqual([{ id: String(b.id) }]);
    expect(res.data!.transactions.nodes).toEqual([{ id: String(txOfA.id) }]);
    expect(res.data!.payouts.nodes).toEqual([{ id: String(payoutOfB.id) }]);
    expect(res.data!.events.nodes.length).toBeGreaterThan(0);
    expect(new Set(res.data!.events.nodes.map((e) => e.objectId))).toEqual(new Set([String(txOfA.id)]));
  });

  it('reads a payout and searches payouts with their customer', async () => {
    const res = await stack.gql<{ payout: Record<string, unknown>; payouts: { nodes: Record<string, unknown>[] } }>(
      `query ($id: ID!) { payout(id: $id) { id amount status mode customer { email } currency { iso } }
         payouts(first: 5) { nodes { id customer { id } } } }`,
      { id: String(payout.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.payout).toMatchObject({ id: String(payout.id), amount: 700, status: 'PENDING', currency: { iso: 'XOF' } });
    expect(res.data!.payout.customer).toMatchObject({ email: customer.email });
    expect(res.data!.payouts.nodes).toContainEqual({ id: String(payout.id), customer: { id: String(customer.id) } });
  });

  it('reads a customer with the embedded phone number and searches customers by e-mail', async () => {
    const res = await stack.gql<{ customer: Record<string, unknown>; customers: { nodes: { id: string }[] } }>(
      `query ($id: ID!, $email: EmailAddress!) {
         customer(id: $id) { id firstname lastname fullName email phoneNumber { number country } phoneNumberId }
         customers(filter: { email: $email }) { nodes { id } } }`,
      { id: String(customer.id), email: customer.email },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.customer).toMatchObject({ firstname: 'Kofi', lastname: 'Annan', phoneNumber: { number: '64000001', country: 'BJ' } });
    expect(res.data!.customer.phoneNumberId).toBe(String(customer.phone_number_id));
    expect(res.data!.customers.nodes).toEqual([{ id: String(customer.id) }]);
  });

  it('reads currencies, one currency, webhooks, events and logs', async () => {
    const make = factories(stack.emulator, key);
    const hook = (await make.rest('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', enabled: false })) as Record<string, unknown>;
    const webhook = (hook['v1/webhook'] ?? hook) as RestObject;
    const currencies = await make.currencies();
    const xof = currencies.find((c) => c.iso === 'XOF')!;
    const list = await stack.gql<{
      currencies: { iso: string }[];
      webhooks: { id: string; url: string; enabled: boolean }[];
      events: { nodes: { id: string; type: string; objectId: string }[] };
      logs: { nodes: { id: string; method: string; status: number }[] };
    }>('{ currencies { iso } webhooks { id url enabled } events(first: 50) { nodes { id type objectId } } logs(first: 5) { nodes { id method status } } }', {}, key);
    expect(list.errors).toBeUndefined();
    expect(list.data!.currencies.map((c) => c.iso)).toContain('XOF');
    expect(list.data!.webhooks).toContainEqual({ id: String(webhook.id), url: 'http://127.0.0.1:9/hook', enabled: false });
    const created = list.data!.events.nodes.find((e) => e.type === 'customer.created' && e.objectId === String(customer.id));
    expect(created).toBeDefined();
    const log = list.data!.logs.nodes[0]!;
    expect(log.method).toMatch(/GET|POST|PUT|DELETE/);

    const one = await stack.gql<{ currency: { iso: string }; webhook: { url: string }; event: { type: string; entity: Record<string, unknown> }; log: { id: string } }>(
      `query ($c: ID!, $w: ID!, $e: ID!, $l: ID!) {
        currency(id: $c) { iso } webhook(id: $w) { url }
        event(id: $e) { type entity { __typename ... on Customer { id email } } }
        log(id: $l) { id } }`,
      { c: String(xof.id), w: String(webhook.id), e: created!.id, l: log.id },
      key,
    );
    expect(one.errors).toBeUndefined();
    expect(one.data).toMatchObject({
      currency: { iso: 'XOF' },
      webhook: { url: 'http://127.0.0.1:9/hook' },
      event: { type: 'customer.created', entity: { __typename: 'Customer', id: String(customer.id), email: customer.email } },
      log: { id: log.id },
    });
  });

  it('pages forward with after cursors until the end', async () => {
    const pageKey = newKey('paging');
    const make = factories(stack.emulator, pageKey);
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push((await make.transaction({ amount: 100 + i })).id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      type Page = { transactions: { nodes: { id: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } };
      const res: GqlResult<Page> = await stack.gql<Page>(
        'query ($after: String) { transactions(first: 3, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }',
        { after },
        pageKey,
      );
      expect(res.errors).toBeUndefined();
      const conn = res.data!.transactions;
      seen.push(...conn.nodes.map((n) => n.id));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    // Newest first, each exactly once.
    expect(seen).toEqual(ids.reverse().map(String));
  });
});
