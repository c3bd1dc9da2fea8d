import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, many, one, waitFor, type Api, type Json } from './helpers.js';

describe('sandbox lifecycle', () => {
  let emu: RunningEmulator;
  let api: Api;

  beforeAll(async () => {
    ({ emu, api } = await emulator({ settleMs: 30 }));
  });
  afterAll(() => emu.stop());

  const phone = (number: string) => ({ number, country: 'bj' });
  const eventsOf = async (objectId: number, prefix: string): Promise<string[]> =>
    many((await api.get(`/v1/events?object_id=${objectId}&per_page=100`)).body, 'events')
      .filter((e: Json) => e.type.startsWith(prefix))
      .map((e: Json) => e.type)
      .reverse();

  async function sentTransaction(number: string, amount = 1000): Promise<Json> {
    const tx = one((await api.post('/v1/transactions', { amount, currency: { iso: 'XOF' }, description: 'x' })).body, 'transaction');
    const { token } = (await api.post(`/v1/transactions/${tx.id}/token`)).body;
    expect((await api.post('/v1/transactions/mtn_open', { token, phone_number: phone(number) })).status).toBe(200);
    return tx;
  }

  const txStatus = async (id: number) => one((await api.get(`/v1/transactions/${id}`)).body, 'transaction');
  const payoutNow = async (id: number) => one((await api.get(`/v1/payouts/${id}`)).body, 'payout');

  it('approves a transaction sent to 64000001, with approved_at and transaction.approved', async () => {
    const tx = await sentTransaction('+22964000001');
    const done = await waitFor(async () => {
      const t = await txStatus(tx.id);
      return t.status === 'approved' ? t : undefined;
    });
    expect(done).toMatchObject({ approved_at: expect.any(String), declined_at: null, last_error_code: null, mode: 'mtn_open' });
    expect(done.receipt_url).toEqual(expect.any(String));
    expect(await eventsOf(tx.id, 'transaction.')).toEqual(['transaction.created', 'transaction.updated', 'transaction.approved']);
    const approved = many((await api.get(`/v1/events?type=transaction.approved&object_id=${tx.id}`)).body, 'events')[0];
    expect(approved.entity).toMatchObject({ id: tx.id, status: 'approved' });
  });

  it('declines a transaction sent to 64000002 with last_error_code INSUFFICIENT_FUNDS', async () => {
    const tx = await sentTransaction('64000002');
    const done = await waitFor(async () => {
      const t = await txStatus(tx.id);
      return t.status === 'declined' ? t : undefined;
    });
    expect(done).toMatchObject({ declined_at: expect.any(String), approved_at: null, last_error_code: 'INSUFFICIENT_FUNDS' });
    expect(await eventsOf(tx.id, 'transaction.')).toContain('transaction.declined');
  });

  it('leaves a transaction sent to 64000003 pending, and lets the caller cancel it', async () => {
    const tx = await sentTransaction('64000003');
    await new Promise((r) => setTimeout(r, 120));
    expect((await txStatus(tx.id)).status).toBe('pending');
    const res = await api.put(`/v1/transactions/${tx.id}`, { status: 'canceled' });
    expect(res.status).toBe(200);
    expect(one(res.body, 'transaction')).toMatchObject({ status: 'canceled', canceled_at: expect.any(String) });
    expect(await eventsOf(tx.id, 'transaction.')).toContain('transaction.canceled');
  });

  it('does not let a late answer overturn a cancellation', async () => {
    const tx = await sentTransaction('64000001');
    await api.put(`/v1/transactions/${tx.id}`, { status: 'canceled' });
    await new Promise((r) => setTimeout(r, 100));
    expect((await txStatus(tx.id)).status).toBe('canceled');
  });

  it.each([1, 67, 100, 999, 1000, 123_457])('fees add up for a transaction and a payout of %i', async (amount) => {
    const tx = one((await api.post('/v1/transactions', { amount, currency: { iso: 'XOF' } })).body, 'transaction');
    expect(tx.fees).toBe(tx.commission + tx.fixed_commission);
    expect(tx.commission).toBe(Math.floor((amount * 15 + 500) / 1000));
    expect(tx.amount_debited).toBe(amount);
    expect(tx.amount_transferred + tx.fees).toBe(tx.amount_debited);
    const p = one((await api.post('/v1/payouts', { amount, currency: { iso: 'XOF' } })).body, 'payout');
    expect(p.amount_transferred).toBe(amount);
    expect(p.amount_debited).toBe(amount + p.fees);
  });

  it('recomputes fees when a pending transaction amount changes', async () => {
    const tx = one((await api.post('/v1/transactions', { amount: 1000, currency: { iso: 'XOF' } })).body, 'transaction');
    const updated = one((await api.put(`/v1/transactions/${tx.id}`, { amount: 2000 })).body, 'transaction');
    expect(updated).toMatchObject({ amount: 2000, commission: 30, fees: 30, amount_transferred: 1970, amount_debited: 2000 });
  });

  async function payout(number: string): Promise<Json> {
    const c = one((await api.post('/v1/customers', { firstname: 'P', lastname: 'Q', email: `${number}@example.com`, phone_number: phone(number) })).body, 'customer');
    return one((await api.post('/v1/payouts', { amount: 5000, currency: { iso: 'XOF' }, customer: { id: c.id }, mode: 'moov' })).body, 'payout');
  }

  it('sends payouts to 64000001 and fails those to 64000002, several started at once', async () => {
    const ok = await payout('64000001');
    const ko = await payout('64000002');
    const res = await api.put('/v1/payouts/start', { payouts: [{ id: ok.id }, { id: ko.id }] });
    expect(many(res.body, 'payouts').map((p: Json) => p.status)).toEqual(['started', 'started']);
    const sent = await waitFor(async () => {
      const p = await payoutNow(ok.id);
      return p.status === 'sent' ? p : undefined;
    });
    expect(sent).toMatchObject({ sent_at: expect.any(String), failed_at: null, last_error_code: null });
    const failed = await waitFor(async () => {
      const p = await payoutNow(ko.id);
      return p.status === 'failed' ? p : undefined;
    });
    expect(failed).toMatchObject({ failed_at: expect.any(String), sent_at: null, last_error_code: 'INSUFFICIENT_FUNDS' });
    expect(await eventsOf(ok.id, 'payout.')).toEqual(['payout.created', 'payout.started', 'payout.sent']);
    expect(await eventsOf(ko.id, 'payout.')).toEqual(['payout.created', 'payout.started', 'payout.failed']);
  });

  it('schedules a payout with a future scheduled_at and sends it when the time comes', async () => {
    const p = await payout('64000001');
    const at = new Date(Date.now() + 150).toISOString();
    const res = await api.put('/v1/payouts/start', [{ id: p.id, scheduled_at: at }]);
    expect(many(res.body, 'payouts')[0]).toMatchObject({ status: 'scheduled', scheduled_at: at });
    expect((await payoutNow(p.id)).status).toBe('scheduled');
    await waitFor(async () => ((await payoutNow(p.id)).status === 'sent' ? true : undefined));
    expect(await eventsOf(p.id, 'payout.')).toEqual(['payout.created', 'payout.scheduled', 'payout.started', 'payout.sent']);
  });

  it('starts at once a payout whose scheduled_at is in the past', async () => {
    const p = await payout('64000001');
    const res = await api.put('/v1/payouts/start', [{ id: p.id, scheduled_at: '2020-01-01T00:00:00Z' }]);
    expect(many(res.body, 'payouts')[0].status).toBe('started');
  });

  it('refuses to delete a started payout and leaves it as it was', async () => {
    const p = await payout('64000003');
    await api.put('/v1/payouts/start', [{ id: p.id }]);
    const res = await api.del(`/v1/payouts/${p.id}`);
    expect(res.status).toBe(409);
    expect(res.body.errors).toEqual({ status: ['a started payout is in flight and cannot be deleted'] });
    expect(await payoutNow(p.id)).toMatchObject({ status: 'started', deleted_at: null });
    expect(await eventsOf(p.id, 'payout.')).toEqual(['payout.created', 'payout.started']);
  });

  it('records customer events', async () => {
    const c = one((await api.post('/v1/customers', { firstname: 'E', lastname: 'V', email: 'ev@example.com' })).body, 'customer');
    await api.put(`/v1/customers/${c.id}`, { firstname: 'Eve' });
    await api.del(`/v1/customers/${c.id}`);
    expect(await eventsOf(c.id, 'customer.')).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
  });

  it('seeds demo data across every status', async () => {
    const key = emu.seedDemo('sk_sandbox_lifecycle_demo');
    const demo = api.as(key);
    const txs = many((await demo.get('/v1/transactions?per_page=100')).body, 'transactions').map((t: Json) => t.status);
    expect(new Set(txs)).toEqual(new Set(['pending', 'approved', 'declined', 'canceled', 'refunded', 'transferred']));
    const pays = many((await demo.get('/v1/payouts?per_page=100')).body, 'payouts').map((p: Json) => p.status);
    expect(new Set(pays)).toEqual(new Set(['pending', 'scheduled', 'started', 'sent', 'failed']));
    expect(txs).toHaveLength(36);
    expect(pays).toHaveLength(20);
    expect(many((await demo.get('/v1/customers?per_page=100')).body, 'customers')).toHaveLength(12);
    expect(emu.seedDemo()).toBe('sk_sandbox_demo');
  });
});
