/**
 * State changes safe to repeat: a change that already happened answers the
 * object with no error and no second upstream write; a conflicting one is an
 * INVALID_STATE user error naming the current status, with no write at all.
 * Upstream writes are counted at the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

interface Payload {
  transaction: { id: string; status: string } | null;
  userErrors: { field: string[] | null; message: string; code: string }[];
}

describe('transitions safe to repeat', () => {
  let stack: Stack;
  const key = newKey('transitions');
  const make = () => factories(stack.emulator, key);
  const move = (kind: 'transactions' | 'payouts', id: number, status: string) =>
    stack.admin('POST', `/_emulator/${kind}/${id}/status`, { status });

  beforeAll(async () => {
    // Payouts sent to the phone move on their own; a long settle keeps them still during a test.
    stack = await startStack({ emulator: { settleMs: 60_000 } });
  });
  afterAll(() => stack.stop());

  const cancel = (id: number, idempotencyKey?: string) =>
    stack.gql<{ cancelTransaction: Payload }>(
      `mutation ($id: ID!, $k: String) { cancelTransaction(id: $id, idempotencyKey: $k) {
          transaction { id status } userErrors { field message code } } }`,
      { id: String(id), k: idempotencyKey ?? null },
      key,
    );
  const cancelByUpdate = (id: number) =>
    stack.gql<{ updateTransaction: Payload }>(
      `mutation ($id: ID!) { updateTransaction(id: $id, input: { status: CANCELED }) {
          transaction { id status } userErrors { field message code } } }`,
      { id: String(id) },
      key,
    );

  it('cancels a pending transaction with one upstream write', async () => {
    const t = await make().transaction();
    await stack.resetCounts();
    const res = await cancel(t.id);
    expect(res.errors).toBeUndefined();
    expect(res.data!.cancelTransaction).toEqual({ transaction: { id: String(t.id), status: 'CANCELED' }, userErrors: [] });
    expect(await stack.upstreamCalls('PUT /v1/transactions/:id')).toBe(1);
  });

  it.each([
    ['cancelTransaction', (id: number) => cancel(id).then((r) => r.data!.cancelTransaction)],
    ['updateTransaction(status: CANCELED)', (id: number) => cancelByUpdate(id).then((r) => r.data!.updateTransaction)],
  ])('repeating a cancel with %s answers the canceled transaction and writes nothing', async (_name, run) => {
    const t = await make().transaction();
    await run(t.id);
    await stack.resetCounts();
    const again = await run(t.id);
    expect(again).toEqual({ transaction: { id: String(t.id), status: 'CANCELED' }, userErrors: [] });
    expect(await stack.upstreamCalls('PUT /v1/transactions/:id')).toBe(0);
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(1);
  });

  it.each(['approved', 'declined', 'refunded', 'transferred'])(
    'refuses to cancel a %s transaction with INVALID_STATE naming the status, writing nothing',
    async (status) => {
      const t = await make().transaction();
      await move('transactions', t.id, status);
      await stack.resetCounts();
      for (const payload of [(await cancel(t.id)).data!.cancelTransaction, (await cancelByUpdate(t.id)).data!.updateTransaction]) {
        expect(payload.transaction).toBeNull();
        expect(payload.userErrors).toEqual([{ field: null, message: expect.stringContaining(status), code: 'INVALID_STATE' }]);
      }
      expect(await stack.upstreamCalls('PUT /v1/transactions/:id')).toBe(0);
    },
  );

  describe('changes the payments API refuses in the current status (409)', () => {
    const userErrorsOf = async (query: string, variables: Record<string, unknown>) => {
      const res = await stack.gql<Record<string, { userErrors: Payload['userErrors'] }>>(query, variables, key);
      expect(res.errors).toBeUndefined();
      return Object.values(res.data!)[0]!.userErrors;
    };

    it('names the status of an approved transaction whose amount is changed, or that is sent again', async () => {
      const t = await make().transaction();
      await move('transactions', t.id, 'approved');
      const update = await userErrorsOf('mutation ($id: ID!) { updateTransaction(id: $id, input: { amountDecimal: "10" }) { userErrors { field message code } } }', { id: String(t.id) });
      const send = await userErrorsOf(
        'mutation ($id: ID!) { sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }) { userErrors { field message code } } }',
        { id: String(t.id) },
      );
      for (const userErrors of [update, send]) {
        expect(userErrors).toEqual([{ field: null, message: 'The payments API refused this change; the transaction is now approved.', code: 'INVALID_STATE' }]);
      }
    });

    it('names the status of a scheduled payout that is changed, read once after the refusal', async () => {
      const p = await make().payout({ mode: 'mtn' });
      await move('payouts', p.id, 'scheduled');
      await stack.resetCounts();
      // The currency is given: nothing is read before the write, so every read counted is the one after it.
      const userErrors = await userErrorsOf('mutation ($id: ID!) { updatePayout(id: $id, changes: { amountDecimal: "5", currency: { iso: "XOF" } }) { userErrors { field message code } } }', { id: String(p.id) });
      expect(userErrors).toEqual([{ field: null, message: 'The payments API refused this change; the payout is now scheduled.', code: 'INVALID_STATE' }]);
      expect(await stack.upstreamCalls('PUT /v1/payouts/:id')).toBe(1);
      expect(await stack.upstreamCalls('GET /v1/payouts/:id')).toBe(1);
    });

    it('names the status when the payments API refuses a cancel the check let through (a race)', async () => {
      const t = await make().transaction();
      await stack.admin('POST', '/_emulator/faults', { route: 'PUT /v1/transactions/:id', status: 409, times: 1, body: { message: 'Conflict' } });
      try {
        const userErrors = await userErrorsOf('mutation ($id: ID!) { cancelTransaction(id: $id) { userErrors { field message code } } }', { id: String(t.id) });
        expect(userErrors).toEqual([{ field: null, message: 'The payments API refused this change; the transaction is now pending.', code: 'INVALID_STATE' }]);
      } finally {
        await stack.admin('DELETE', '/_emulator/faults');
      }
    });

    it('reads nothing after a refusal that is not about the status (422)', async () => {
      const p = await make().payout({ mode: 'mtn' });
      await stack.admin('POST', '/_emulator/faults', { route: 'PUT /v1/payouts/:id', status: 422, times: 1, body: { message: 'Refused', errors: { amount: ['is too large'] } } });
      await stack.resetCounts();
      try {
        const userErrors = await userErrorsOf('mutation ($id: ID!) { updatePayout(id: $id, changes: { amountDecimal: "5", currency: { iso: "XOF" } }) { userErrors { field code } } }', { id: String(p.id) });
        expect(userErrors).toEqual([{ field: ['changes', 'amountDecimal'], code: 'INVALID' }]);
        expect(await stack.upstreamCalls('GET /v1/payouts/:id')).toBe(0);
      } finally {
        await stack.admin('DELETE', '/_emulator/faults');
      }
    });

    it('keeps the plain message when the status cannot be read after the refusal', async () => {
      const p = await make().payout({ mode: 'mtn' });
      await move('payouts', p.id, 'scheduled');
      // A change that needs no read first (the currency is given); the read after the refusal fails, retries included.
      await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/payouts/:id', status: 503, times: 20 });
      await stack.resetCounts();
      try {
        const userErrors = await userErrorsOf('mutation ($id: ID!) { updatePayout(id: $id, changes: { amountDecimal: "5", currency: { iso: "XOF" } }) { userErrors { field message code } } }', { id: String(p.id) });
        expect(userErrors).toEqual([{ field: null, message: 'The object is not in a status that allows this change.', code: 'INVALID_STATE' }]);
        expect(await stack.upstreamCalls('PUT /v1/payouts/:id')).toBe(1);
        // Read after the refusal, retried (503), and given up: no read before the write.
        expect(await stack.upstreamCalls('GET /v1/payouts/:id')).toBeGreaterThan(0);
      } finally {
        await stack.admin('DELETE', '/_emulator/faults');
      }
    });
  });

  it('keeps idempotency keys working: a replay with the key reads and writes nothing', async () => {
    const t = await make().transaction();
    const first = await cancel(t.id, `cancel-${t.id}`);
    expect(first.data!.cancelTransaction.transaction).toEqual({ id: String(t.id), status: 'CANCELED' });
    await stack.resetCounts();
    const replay = await cancel(t.id, `cancel-${t.id}`);
    expect(replay.data!.cancelTransaction).toEqual(first.data!.cancelTransaction);
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('answers NOT_FOUND for an unknown transaction', async () => {
    const res = await cancel(987654);
    expect(res.data!.cancelTransaction.userErrors).toEqual([
      { field: ['id'], message: expect.any(String), code: 'NOT_FOUND' },
    ]);
  });

  describe('startPayouts', () => {
    const start = (ids: number[]) =>
      stack.gql<{ startPayouts: { payouts: { id: string; status: string }[]; userErrors: Payload['userErrors'] } }>(
        `mutation ($p: [StartPayoutInput!]!) { startPayouts(payouts: $p) { payouts { id status } userErrors { field message code } } }`,
        { p: ids.map((id) => ({ id: String(id), phoneNumber: { number: '64000003', country: 'BJ' } })) },
        key,
      );
    const payout = () => make().payout({ mode: 'mtn' });

    it('starts a pending payout with one upstream write', async () => {
      const p = await payout();
      await stack.resetCounts();
      const res = await start([p.id]);
      expect(res.data!.startPayouts.userErrors).toEqual([]);
      expect(res.data!.startPayouts.payouts).toEqual([{ id: String(p.id), status: expect.stringMatching(/STARTED|PROCESSING/) }]);
      expect(await stack.upstreamCalls('PUT /v1/payouts/start')).toBe(1);
    });

    it.each(['started', 'scheduled', 'processing', 'sent'])(
      'repeating a start on a %s payout answers it as it is and writes nothing',
      async (status) => {
        const p = await payout();
        await move('payouts', p.id, status);
        await stack.resetCounts();
        const res = await start([p.id]);
        expect(res.errors).toBeUndefined();
        expect(res.data!.startPayouts).toEqual({ payouts: [{ id: String(p.id), status: status.toUpperCase() }], userErrors: [] });
        expect(await stack.upstreamCalls('PUT /v1/payouts/start')).toBe(0);
      },
    );

    it('reads a batch of 100 payouts, and refuses one of 101 on `payouts` before any read', async () => {
      const START = 'mutation ($p: [StartPayoutInput!]!) { startPayouts(payouts: $p) { payouts { id } userErrors { field message code } } }';
      const payouts = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(800_000 + i), phoneNumber: { number: '64000003', country: 'BJ' } }));
      await stack.resetCounts();
      const hundred = await stack.gql<{ startPayouts: { userErrors: Payload['userErrors'] } }>(START, { p: payouts(100) }, key);
      expect(hundred.data!.startPayouts.userErrors.map((e) => e.code)).toEqual(Array(100).fill('NOT_FOUND'));
      expect(await stack.upstreamCalls('GET /v1/payouts/:id')).toBe(100);
      await stack.resetCounts();
      const more = await stack.gql<{ startPayouts: { userErrors: Payload['userErrors'] } }>(START, { p: payouts(101) }, key);
      expect(more.data!.startPayouts.userErrors).toEqual([{ field: ['payouts'], message: 'At most 100 payouts per start (101 given): split the batch.', code: 'INVALID' }]);
      expect(await stack.upstreamCalls()).toBe(0);
    });

    it('refuses a batch naming one payout twice, on the repeated item, and writes nothing', async () => {
      const p = await payout();
      await stack.resetCounts();
      const res = await start([p.id, p.id]);
      expect(res.data!.startPayouts.userErrors).toEqual([{ field: ['payouts', '1', 'id'], message: expect.stringMatching(/already in this batch/), code: 'INVALID' }]);
      expect(await stack.upstreamCalls()).toBe(0);
    });

    it('sends only the pending payouts of a batch that mixes started and pending ones', async () => {
      const started = await payout();
      const pending = await payout();
      await move('payouts', started.id, 'started');
      await stack.resetCounts();
      const res = await start([started.id, pending.id]);
      expect(res.data!.startPayouts.userErrors).toEqual([]);
      expect(res.data!.startPayouts.payouts.map((p) => p.id)).toEqual([String(started.id), String(pending.id)]);
      expect(res.data!.startPayouts.payouts[1]!.status).not.toBe('PENDING');
      expect(await stack.upstreamCalls('PUT /v1/payouts/start')).toBe(1);
    });

    it('refuses to start a failed payout with INVALID_STATE on its item, starting nothing of the batch', async () => {
      const failed = await payout();
      const pending = await payout();
      await move('payouts', failed.id, 'failed');
      await stack.resetCounts();
      const res = await start([pending.id, failed.id]);
      expect(res.data!.startPayouts).toEqual({
        payouts: [],
        userErrors: [{ field: ['payouts', '1', 'id'], message: expect.stringContaining('failed'), code: 'INVALID_STATE' }],
      });
      expect(await stack.upstreamCalls('PUT /v1/payouts/start')).toBe(0);
    });
  });
});
