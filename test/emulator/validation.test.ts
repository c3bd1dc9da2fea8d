import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, many, one, type Api } from './helpers.js';

describe('bad input', () => {
  let emu: RunningEmulator;
  let api: Api;

  beforeAll(async () => {
    ({ emu, api } = await emulator());
  });
  afterAll(() => emu.stop());

  const customer = async (a: Api = api) =>
    one((await a.post('/v1/customers', { firstname: 'A', lastname: 'B', email: `x${Math.random()}@example.com`, phone_number: { number: '64000001', country: 'bj' } })).body, 'customer');

  describe('authentication', () => {
    it.each([
      ['no Authorization header', null],
      ['a live key', 'Bearer sk_live_abc'],
      ['a key of no known kind', 'Bearer pk_sandbox_abc'],
      ['an empty sandbox key', 'Bearer sk_sandbox_'],
      ['a Basic scheme', 'Basic c2tfc2FuZGJveF94Og=='],
      ['a bare key without Bearer', 'sk_sandbox_abc'],
    ])('refuses %s with a 401 and the JSON error body', async (_name, auth) => {
      const res = await api.get('/v1/transactions', { auth });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: expect.any(String), errors: expect.any(Object) });
    });

    it('counts refused requests in the stats', async () => {
      emu.resetStats();
      await api.get('/v1/customers/1', { auth: null });
      expect(emu.stats().routes['GET /v1/customers/:id']).toBe(1);
    });

    it('gives the same key the same account and a different key another', async () => {
      const a = await customer();
      const b = await customer();
      const other = await customer(api.as('sk_sandbox_someone_else'));
      expect(a.account_id).toBe(b.account_id);
      expect(other.account_id).not.toBe(a.account_id);
    });
  });

  describe('accounts are separate', () => {
    it.each([
      ['GET', '/v1/customers/:id'],
      ['PUT', '/v1/customers/:id'],
      ['DELETE', '/v1/customers/:id'],
    ])('answers 404 to %s %s with another account id', async (method, route) => {
      const c = await customer();
      const res = await api.as('sk_sandbox_intruder').call(method, route.replace(':id', String(c.id)), method === 'GET' || method === 'DELETE' ? undefined : { lastname: 'X' });
      expect(res.status).toBe(404);
      expect(res.body.message).toEqual(expect.any(String));
      expect(one((await api.get(`/v1/customers/${c.id}`)).body, 'customer').lastname).toBe('B');
    });

    it('answers 404 for another account transaction, payout, event, currency and token', async () => {
      const tx = one((await api.post('/v1/transactions', { amount: 100, currency: { iso: 'XOF' } })).body, 'transaction');
      const p = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } })).body, 'payout');
      const ev = many((await api.get('/v1/events?per_page=1')).body, 'events')[0];
      const cur = many((await api.get('/v1/currencies')).body, 'currencies')[0];
      const intruder = api.as('sk_sandbox_intruder');
      for (const path of [`/v1/transactions/${tx.id}`, `/v1/payouts/${p.id}`, `/v1/events/${ev.id}`, `/v1/currencies/${cur.id}`]) {
        expect((await intruder.get(path)).status, path).toBe(404);
      }
      expect((await intruder.post(`/v1/transactions/${tx.id}/token`)).status).toBe(404);
      const token = (await api.post(`/v1/transactions/${tx.id}/token`)).body.token;
      const send = await intruder.post('/v1/transactions/mtn', { token, phone_number: { number: '64000001', country: 'bj' } });
      expect(send.status).toBe(422);
      expect(send.body.errors.token).toBeDefined();
      expect((await intruder.put('/v1/payouts/start', [{ id: p.id, phone_number: { number: '64000001', country: 'bj' } }])).status).toBe(422);
    });

    it('answers 404 for an id that is not a number or does not exist', async () => {
      expect((await api.get('/v1/transactions/abc')).status).toBe(404);
      expect((await api.get('/v1/payouts/99999999')).status).toBe(404);
    });
  });

  describe('field validation', () => {
    const valid = { amount: 1000, currency: { iso: 'XOF' }, description: 'ok' };
    it.each([
      ['amount missing', { currency: { iso: 'XOF' } }, 'amount'],
      ['amount zero', { ...valid, amount: 0 }, 'amount'],
      ['amount negative', { ...valid, amount: -5 }, 'amount'],
      ['amount not a number', { ...valid, amount: 'lots' }, 'amount'],
      ['amount with a fraction', { ...valid, amount: 10.5 }, 'amount'],
      ['currency missing', { amount: 1000 }, 'currency'],
      ['currency iso unknown', { ...valid, currency: { iso: 'EUR' } }, 'currency.iso'],
      ['customer id unknown', { ...valid, customer: { id: 987654 } }, 'customer.id'],
      ['customer e-mail bad', { ...valid, customer: { firstname: 'A', lastname: 'B', email: 'nope' } }, 'customer.email'],
      ['mode unknown', { ...valid, mode: 'carrier_pigeon' }, 'mode'],
      ['callback_url not a URL', { ...valid, callback_url: 'ftp:/x' }, 'callback_url'],
    ])('refuses a transaction with %s (422 naming %s) and creates nothing', async (_name, body, field) => {
      const before = (await api.get('/v1/transactions')).body.meta.total_count;
      const res = await api.post('/v1/transactions', body);
      expect(res.status).toBe(422);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.errors[field as string]).toEqual([expect.any(String)]);
      expect((await api.get('/v1/transactions')).body.meta.total_count).toBe(before);
    });

    it.each([
      ['e-mail invalid', { firstname: 'A', lastname: 'B', email: 'not-an-email' }, 'email'],
      ['lastname missing', { firstname: 'A', email: 'a@example.com' }, 'lastname'],
      ['phone number an object', { firstname: 'A', lastname: 'B', email: 'a@example.com', phone_number: { number: { x: 1 }, country: 'bj' } }, 'phone_number.number'],
      ['phone number a boolean', { firstname: 'A', lastname: 'B', email: 'a@example.com', phone_number: { number: true, country: 'bj' } }, 'phone_number.number'],
      ['phone country missing', { firstname: 'A', lastname: 'B', email: 'a@example.com', phone_number: { number: '64000001' } }, 'phone_number.country'],
    ])('refuses a customer with %s (422 naming %s)', async (_name, body, field) => {
      const res = await api.post('/v1/customers', body);
      expect(res.status).toBe(422);
      expect(res.body.errors[field as string]).toEqual([expect.any(String)]);
    });

    it('accepts a phone number as a string or a number and the country in either case', async () => {
      for (const phone_number of [{ number: 64000001, country: 'BJ' }, { number: '+229 64 00 00 01', country: 'bj' }]) {
        const res = await api.post('/v1/customers', { firstname: 'A', lastname: 'B', email: 'p@example.com', phone_number });
        expect(res.status).toBe(201);
        expect(one(res.body, 'customer').phone_number.country).toBe('bj');
      }
    });

    it('reports every bad field at once', async () => {
      const res = await api.post('/v1/customers', { email: 'bad' });
      expect(Object.keys(res.body.errors).sort()).toEqual(['email', 'firstname', 'lastname']);
    });

    it('refuses a send through an unknown mode or without a token', async () => {
      const res = await api.post('/v1/transactions/carrier_pigeon', {});
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).sort()).toEqual(['mode', 'token']);
    });

    it('refuses a body that is not JSON with a 400', async () => {
      const res = await api.post('/v1/customers', '{oops');
      expect(res.status).toBe(400);
      expect(res.body.errors.body).toBeDefined();
    });
  });

  describe('invalid moves', () => {
    it.each([
      ['declined', 'approved'],
      ['canceled', 'pending'],
      ['approved', 'canceled'],
      ['refunded', 'approved'],
    ])('refuses to move a %s transaction to %s with a 409, changing nothing', async (from, to) => {
      const tx = one((await api.post('/v1/transactions', { amount: 100, currency: { iso: 'XOF' } })).body, 'transaction');
      const path = from === 'refunded' ? ['approved', 'refunded'] : [from];
      for (const s of path) expect((await api.put(`/v1/transactions/${tx.id}`, { status: s })).status).toBe(200);
      const res = await api.put(`/v1/transactions/${tx.id}`, { status: to, description: 'changed?' });
      expect(res.status).toBe(409);
      expect(res.body.errors.status).toEqual([expect.any(String)]);
      expect(one((await api.get(`/v1/transactions/${tx.id}`)).body, 'transaction')).toMatchObject({ status: from, description: null });
    });

    it('refuses an unknown status with a 422', async () => {
      const tx = one((await api.post('/v1/transactions', { amount: 100, currency: { iso: 'XOF' } })).body, 'transaction');
      expect((await api.put(`/v1/transactions/${tx.id}`, { status: 'paid' })).status).toBe(422);
    });

    it('refuses a token or a send for a transaction that is no longer pending', async () => {
      const tx = one((await api.post('/v1/transactions', { amount: 100, currency: { iso: 'XOF' } })).body, 'transaction');
      const token = (await api.post(`/v1/transactions/${tx.id}/token`)).body.token;
      await api.put(`/v1/transactions/${tx.id}`, { status: 'canceled' });
      expect((await api.post(`/v1/transactions/${tx.id}/token`)).status).toBe(409);
      expect((await api.post('/v1/transactions/mtn', { token, phone_number: { number: '64000001', country: 'bj' } })).status).toBe(409);
    });

    it('refuses to update a payout that has started', async () => {
      const p = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } })).body, 'payout');
      await api.put('/v1/payouts/start', [{ id: p.id, phone_number: { number: '64000003', country: 'bj' } }]);
      expect((await api.put(`/v1/payouts/${p.id}`, { amount: 200 })).status).toBe(409);
    });
  });

  describe('a bad start batch', () => {
    it('refuses the whole batch with a 422 naming the bad item, and starts none', async () => {
      const c = await customer();
      const good = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' }, customer: { id: c.id } })).body, 'payout');
      const noPhone = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } })).body, 'payout');
      const res = await api.put('/v1/payouts/start', {
        payouts: [{ id: good.id }, { id: 999_999 }, { id: noPhone.id }, { id: good.id }, { id: good.id, scheduled_at: 'soon' }],
      });
      expect(res.status).toBe(422);
      expect(res.body.errors).toMatchObject({
        'payouts[1].id': [expect.stringContaining('999999')],
        'payouts[2].phone_number': [expect.any(String)],
        'payouts[3].id': [expect.stringContaining('twice')],
        'payouts[4].scheduled_at': [expect.any(String)],
      });
      expect(res.body.errors['payouts[0].id']).toBeUndefined();
      expect(one((await api.get(`/v1/payouts/${good.id}`)).body, 'payout').status).toBe('pending');
      expect(many((await api.get(`/v1/events?filters[type]=payout.started&object_id=${good.id}`)).body, 'events')).toHaveLength(0);
      // Nothing lost: the good item starts once the batch is fixed.
      const retry = await api.put('/v1/payouts/start', { payouts: [{ id: good.id }] });
      expect(retry.status).toBe(200);
    });

    it.each([
      ['an empty array', []],
      ['an object without payouts', { ids: [1] }],
      ['an item that is not an object', [5]],
    ])('refuses %s', async (_name, body) => {
      const res = await api.put('/v1/payouts/start', body);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)[0]).toMatch(/^payouts/);
    });

    it('refuses to start a payout twice', async () => {
      const c = await customer();
      const p = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' }, customer: { id: c.id } })).body, 'payout');
      expect((await api.put('/v1/payouts/start', [{ id: p.id }])).status).toBe(200);
      const again = await api.put('/v1/payouts/start', [{ id: p.id }]);
      expect(again.status).toBe(422);
      expect(again.body.errors['payouts[0].id'][0]).toContain('only pending');
    });
  });

  it('replays the response of a write sent again with the same Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `k-${Math.random()}` };
    const first = await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } }, { headers });
    const second = await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } }, { headers });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(one(second.body, 'payout').id).toBe(one(first.body, 'payout').id);
    const other = await api.as('sk_sandbox_idem_other').post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } }, { headers });
    expect(one(other.body, 'payout').id).not.toBe(one(first.body, 'payout').id);
  });

  it('ignores unknown fields', async () => {
    const res = await api.post('/v1/customers', { firstname: 'A', lastname: 'B', email: 'u@example.com', favourite_colour: 'blue' });
    expect(res.status).toBe(201);
    expect(one(res.body, 'customer')).not.toHaveProperty('favourite_colour');
  });
});
