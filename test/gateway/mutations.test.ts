import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

/** Polls until `check` passes or the time is up (lifecycle moves happen after settleMs). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  let value = await read();
  while (!check(value) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

describe.each(['enveloped', 'plain'] as const)('mutations against an emulator answering %s', (responseStyle) => {
  let stack: Stack;
  const key = newKey('mutations');

  beforeAll(async () => {
    stack = await startStack({ emulator: { responseStyle, settleMs: 30 } });
  });
  afterAll(() => stack.stop());

  it('creates a customer, then a transaction for it, and reads both back', async () => {
    const created = await stack.gql<{ createCustomer: { customer: { id: string; fullName: string; phoneNumber: { country: string } }; userErrors: unknown[] } }>(
      `mutation { createCustomer(input: { firstname: "Efua", lastname: "Owusu", email: "efua@example.com",
          phoneNumber: { number: "64000001", country: "BJ" } }) {
        customer { id fullName phoneNumber { country } } userErrors { field message code } } }`,
      {},
      key,
    );
    expect(created.errors).toBeUndefined();
    expect(created.data!.createCustomer.userErrors).toEqual([]);
    const customer = created.data!.createCustomer.customer;
    expect(customer).toMatchObject({ fullName: 'Efua Owusu', phoneNumber: { country: 'BJ' } });

    const tx = await stack.gql<{ createTransaction: { transaction: { id: string; status: string; amount: number; customer: { id: string }; currency: { iso: string } }; userErrors: unknown[] } }>(
      `mutation ($c: ID!) { createTransaction(input: { amount: 1500, description: "Shoes", currency: { iso: "XOF" },
          customer: { id: $c }, callbackUrl: "https://shop.example.com/cb" }) {
        transaction { id status amount customer { id } currency { iso } } userErrors { field message code } } }`,
      { c: customer.id },
      key,
    );
    expect(tx.errors).toBeUndefined();
    expect(tx.data!.createTransaction).toMatchObject({
      transaction: { status: 'PENDING', amount: 1500, customer: { id: customer.id }, currency: { iso: 'XOF' } },
      userErrors: [],
    });
  });

  it('updates a transaction: cancels it, and reads the mode the update response lacks', async () => {
    const t = await factories(stack.emulator, key).transaction({ mode: 'mtn' });
    const res = await stack.gql<{ updateTransaction: { transaction: { id: string; status: string; description: string; canceledAt: string; mode: string | null }; userErrors: unknown[] } }>(
      `mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "Changed", status: CANCELED }) {
          transaction { id status description canceledAt mode } userErrors { field code } } }`,
      { id: String(t.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.updateTransaction.userErrors).toEqual([]);
    expect(res.data!.updateTransaction.transaction).toMatchObject({ status: 'CANCELED', description: 'Changed', mode: 'mtn' });
    expect(res.data!.updateTransaction.transaction.canceledAt).toEqual(expect.any(String));
  });

  it('reads the mode after an update only when it is selected', async () => {
    const t = await factories(stack.emulator, key).transaction({ mode: 'moov' });
    const update = (selection: string) =>
      stack.gql<{ updateTransaction: { transaction: Record<string, unknown> } }>(
        `mutation ($id: ID!) { updateTransaction(id: $id, input: { description: "Again" }) { transaction { ${selection} } } }`,
        { id: String(t.id) },
        key,
      );
    await stack.resetCounts();
    expect((await update('id description')).data!.updateTransaction.transaction).toEqual({ id: String(t.id), description: 'Again' });
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(0);
    expect((await update('mode')).data!.updateTransaction.transaction).toEqual({ mode: 'moov' });
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(1);
  });

  it('creates a hosted-checkout token with its url', async () => {
    const t = await factories(stack.emulator, key).transaction();
    const res = await stack.gql<{ createTransactionToken: { token: string; url: string; transaction: { id: string }; userErrors: unknown[] } }>(
      'mutation ($id: ID!) { createTransactionToken(id: $id) { token url transaction { id } userErrors { code } } }',
      { id: String(t.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    const payload = res.data!.createTransactionToken;
    expect(payload.token).toEqual(expect.any(String));
    expect(new URL(payload.url).protocol).toMatch(/^https?:$/);
    expect(payload.transaction).toEqual({ id: String(t.id) });
  });

  it('sends a transaction (token and send in one mutation) and it becomes approved', async () => {
    const t = await factories(stack.emulator, key).transaction({ amount: 3000 });
    await stack.resetCounts();
    const res = await stack.gql<{ sendTransaction: { paymentIntents: { status: string; mode: string }[]; transaction: { id: string }; userErrors: unknown[] } }>(
      `mutation ($id: ID!) { sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }) {
          paymentIntents { status mode } transaction { id } userErrors { code } } }`,
      { id: String(t.id) },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.sendTransaction.userErrors).toEqual([]);
    expect(res.data!.sendTransaction.paymentIntents[0]).toMatchObject({ status: 'PENDING', mode: 'mtn' });
    expect(await stack.upstreamCalls('POST /v1/transactions/:id/token')).toBe(1);
    expect(await stack.upstreamCalls('POST /v1/transactions/:mode')).toBe(1);

    const approved = await eventually(
      () => stack.gql<{ transaction: { status: string; isPaid: boolean; approvedAt: string | null } }>(
        'query ($id: ID!) { transaction(id: $id) { status isPaid approvedAt } }', { id: String(t.id) }, key),
      (r) => r.data?.transaction.status === 'APPROVED',
    );
    expect(approved.data!.transaction).toMatchObject({ status: 'APPROVED', isPaid: true, approvedAt: expect.any(String) });
  });

  it('creates, updates and starts payouts in one upstream request, which then become sent', async () => {
    const create = (amount: number) =>
      stack.gql<{ createPayout: { payout: { id: string; status: string; amount: number }; userErrors: unknown[] } }>(
        `mutation ($amount: Float!) { createPayout(input: { amount: $amount, currency: { iso: "XOF" }, mode: "mtn",
            customer: { firstname: "Yaw", lastname: "Boateng", email: "yaw@example.com" } }) { payout { id status amount } userErrors { code } } }`,
        { amount },
        key,
      );
    const a = (await create(100)).data!.createPayout.payout;
    const b = (await create(200)).data!.createPayout.payout;
    expect(a).toMatchObject({ status: 'PENDING', amount: 100 });

    const updated = await stack.gql<{ updatePayout: { payout: { amount: number }; userErrors: unknown[] } }>(
      'mutation ($id: ID!) { updatePayout(id: $id, input: { amount: 250, currency: { iso: "XOF" }, mode: "mtn" }) { payout { amount } userErrors { code } } }',
      { id: b.id },
      key,
    );
    expect(updated.data!.updatePayout).toEqual({ payout: { amount: 250 }, userErrors: [] });

    await stack.resetCounts();
    const started = await stack.gql<{ startPayouts: { payouts: { id: string; status: string }[]; userErrors: unknown[] } }>(
      `mutation ($a: ID!, $b: ID!) { startPayouts(payouts: [
          { id: $a, phoneNumber: { number: "64000001", country: "BJ" } },
          { id: $b, phoneNumber: { number: "64000001", country: "BJ" } }]) { payouts { id status } userErrors { code } } }`,
      { a: a.id, b: b.id },
      key,
    );
    expect(started.errors).toBeUndefined();
    expect(started.data!.startPayouts.userErrors).toEqual([]);
    expect(started.data!.startPayouts.payouts.map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
    expect(await stack.upstreamCalls('PUT /v1/payouts/start')).toBe(1);

    const sent = await eventually(
      () => stack.gql<{ payout: { status: string; sentAt: string | null } }>('query ($id: ID!) { payout(id: $id) { status sentAt } }', { id: a.id }, key),
      (r) => r.data?.payout.status === 'SENT',
    );
    expect(sent.data!.payout).toMatchObject({ status: 'SENT', sentAt: expect.any(String) });
  });

  it('keeps the merchant reference and custom metadata a payout is created with, and the metadata `changes` gives it', async () => {
    type Payout = { id: string; merchantReference: string | null; customMetadata: Record<string, unknown> | null };
    const created = await stack.gql<{ createPayout: { payout: Payout; userErrors: unknown[] } }>(
      `mutation { createPayout(input: { amount: 300, currency: { iso: "XOF" }, mode: "mtn", merchantReference: "ref-7", customMetadata: { order: 7 } }) {
          payout { id merchantReference customMetadata } userErrors { code } } }`,
      {},
      key,
    );
    expect(created.data!.createPayout).toMatchObject({ payout: { merchantReference: 'ref-7', customMetadata: { order: 7 } }, userErrors: [] });

    const updated = await stack.gql<{ updatePayout: { payout: Payout; userErrors: unknown[] } }>(
      'mutation ($id: ID!) { updatePayout(id: $id, changes: { customMetadata: { order: 8 } }) { payout { customMetadata } userErrors { code } } }',
      { id: created.data!.createPayout.payout.id },
      key,
    );
    expect(updated.data!.updatePayout).toEqual({ payout: { customMetadata: { order: 8 } }, userErrors: [] });
  });

  it('creates a payout with custom metadata nested as deep as the gateway reads back, and reads it and its history back whole', async () => {
    // The payout is level 1 and its metadata level 2, one level lower in an event about it (level 1 too):
    // 998 nested objects make that event the 1,000 levels the gateway takes.
    let metadata: Record<string, unknown> = { leaf: 1 };
    for (let i = 1; i < 998; i++) metadata = { a: metadata };
    type Payout = { id: string; customMetadata: Record<string, unknown> | null };
    const created = await stack.gql<{ createPayout: { payout: Payout | null; userErrors: unknown[] } }>(
      'mutation ($m: JSONObject) { createPayout(input: { amount: 300, currency: { iso: "XOF" }, mode: "mtn", customMetadata: $m }) { payout { id } userErrors { field code } } }',
      { m: metadata },
      key,
    );
    expect(created.errors).toBeUndefined();
    expect(created.data!.createPayout.userErrors).toEqual([]);

    const id = created.data!.createPayout.payout!.id;
    const read = await stack.gql<{ payout: Payout & { statusHistory: { status: string }[] } }>(
      'query ($id: ID!) { payout(id: $id) { id customMetadata statusHistory { status event { id } } } }',
      { id },
      key,
    );
    expect(read.errors).toBeUndefined();
    expect(read.data!.payout.customMetadata).toEqual(metadata);
    expect(read.data!.payout.statusHistory.length).toBeGreaterThan(0);
    const events = await stack.gql<{ events: { nodes: ({ id: string } | null)[] } }>(
      'query ($id: ID!) { events(first: 10, filter: { objectId: $id }) { nodes { id } } }',
      { id },
      key,
    );
    expect(events.errors).toBeUndefined();
    expect(events.data!.events.nodes.length).toBeGreaterThan(0);
  });

  it('refuses custom metadata nested thousands of levels deep with a user error, keyed or not, sending nothing', async () => {
    // Written as text: JSON.stringify overflows the stack from about 5,000 levels.
    const deep = `${'{"a":'.repeat(6_000)}1${'}'.repeat(6_000)}`;
    const query = 'mutation ($m: JSONObject, $k: String) { createPayout(input: { amount: 300, currency: { iso: "XOF" }, mode: "mtn", customMetadata: $m }, idempotencyKey: $k) { payout { id } userErrors { field code } } }';
    const writes = async () => ((await stack.admin('GET', '/_emulator/stats')) as { routes: Record<string, number> }).routes['POST /v1/payouts'] ?? 0;
    const before = await writes();
    for (const k of ['null', `"deep-${Date.now()}"`]) {
      const res = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: `{"query":${JSON.stringify(query)},"variables":{"k":${k},"m":${deep}}}`,
      });
      const body = (await res.json()) as { errors?: unknown; data?: { createPayout: { payout: unknown; userErrors: unknown[] } } };
      expect(body.errors).toBeUndefined();
      expect(body.data!.createPayout).toEqual({ payout: null, userErrors: [{ field: ['input', 'customMetadata'], code: 'INVALID' }] });
    }
    expect(await writes()).toBe(before);
  });

  it('schedules a payout started with a future scheduledAt', async () => {
    const p = await factories(stack.emulator, key).payout();
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const res = await stack.gql<{ startPayouts: { payouts: { status: string; scheduledAt: string }[] } }>(
      'mutation ($id: ID!, $at: DateTime!) { startPayouts(payouts: [{ id: $id, scheduledAt: $at, phoneNumber: { number: "64000001", country: "BJ" } }]) { payouts { status scheduledAt } } }',
      { id: String(p.id), at },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.startPayouts.payouts[0]!.status).toBe('SCHEDULED');
    expect(new Date(res.data!.startPayouts.payouts[0]!.scheduledAt).getTime()).toBe(new Date(at).getTime());
  });
});
