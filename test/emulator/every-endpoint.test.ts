import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, many, one, type Api, type Json } from './helpers.js';

describe.each(['enveloped', 'plain'] as const)('every endpoint, %s responses', (style) => {
  let emu: RunningEmulator;
  let api: Api;
  const enveloped = style === 'enveloped';

  beforeAll(async () => {
    // Nothing here waits for a payment to settle, and a started payout searched by status must still be started on a loaded machine.
    ({ emu, api } = await emulator({ responseStyle: style, settleMs: 60_000 }));
  });
  afterAll(() => emu.stop());

  /** The single object of a response, checking the style's envelope and `klass`. */
  function single(body: Json, kind: string): Json {
    if (enveloped) {
      expect(Object.keys(body)).toEqual([`v1/${kind}`]);
      expect(body[`v1/${kind}`].klass).toBe(`v1/${kind}`);
      return body[`v1/${kind}`];
    }
    expect(Array.isArray(body)).toBe(false);
    expect(body).not.toHaveProperty('klass');
    return body;
  }

  /** A list response: enveloped with `meta`, or a bare array. */
  function list(body: Json, plural: string): Json[] {
    if (enveloped) {
      expect(body.meta).toMatchObject({ current_page: expect.any(Number), per_page: expect.any(Number), total_count: expect.any(Number) });
      return body[`v1/${plural}`];
    }
    expect(Array.isArray(body)).toBe(true);
    return body;
  }

  /** Spec "Array of" reads: an array of one when plain. */
  function arrayOfOne(body: Json, kind: string): Json {
    if (enveloped) return single(body, kind);
    expect(Array.isArray(body)).toBe(true);
    expect(body).toHaveLength(1);
    return body[0];
  }

  const newCustomer = async (email = `c${Math.random().toString(36).slice(2)}@example.com`, number: string | number = '64000001') => {
    const res = await api.post('/v1/customers', { firstname: 'Ama', lastname: 'Kossi', email, phone_number: { number, country: 'BJ' } });
    expect(res.status).toBe(201);
    return single(res.body, 'customer');
  };

  it('creates, reads, updates, lists, searches and soft-deletes customers with the phone number embedded', async () => {
    const c = await newCustomer('ama@example.com', 64000001);
    expect(c).toMatchObject({ firstname: 'Ama', lastname: 'Kossi', full_name: 'Ama Kossi', email: 'ama@example.com', deleted_at: null });
    expect(c.phone_number).toMatchObject({ id: c.phone_number_id, number: '64000001', country: 'bj' });
    if (enveloped) expect(c.phone_number.klass).toBe('v1/phone_number');

    expect(single((await api.get(`/v1/customers/${c.id}`)).body, 'customer').id).toBe(c.id);

    const updated = single((await api.put(`/v1/customers/${c.id}`, { lastname: 'Mensah', phone_number: { number: '+22964000002', country: 'bj' } })).body, 'customer');
    expect(updated).toMatchObject({ lastname: 'Mensah', full_name: 'Ama Mensah' });
    expect(updated.phone_number.number).toBe('+22964000002');

    expect(list((await api.get('/v1/customers')).body, 'customers').map((x: Json) => x.id)).toContain(c.id);
    expect(list((await api.get('/v1/customers/search?email=AMA@example.com')).body, 'customers').map((x: Json) => x.id)).toEqual([c.id]);
    expect(list((await api.get('/v1/customers/search?filters[q]=mensah')).body, 'customers').map((x: Json) => x.id)).toEqual([c.id]);

    const deleted = await api.del(`/v1/customers/${c.id}`);
    expect(deleted.status).toBe(200);
    expect(single(deleted.body, 'customer').deleted_at).toEqual(expect.any(String));
    expect(list((await api.get('/v1/customers/search?email=ama@example.com')).body, 'customers')).toEqual([]);
    expect(single((await api.get(`/v1/customers/${c.id}`)).body, 'customer').deleted_at).toEqual(expect.any(String));
  });

  it('creates, reads, lists, searches, updates, tokenizes, sends and deletes transactions', async () => {
    const c = await newCustomer();
    const created = await api.post('/v1/transactions', {
      amount: 2000,
      currency: { iso: 'XOF' },
      customer: { id: c.id },
      description: 'Order 1',
      callback_url: 'https://shop.example/cb',
      unknown_field: 'ignored',
    });
    expect(created.status).toBe(201);
    const tx = single(created.body, 'transaction');
    expect(tx).toMatchObject({ status: 'pending', amount: 2000, customer_id: c.id, description: 'Order 1', mode: null });
    expect(tx.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);

    expect(single((await api.get(`/v1/transactions/${tx.id}`)).body, 'transaction')).toHaveProperty('mode');
    expect(list((await api.get('/v1/transactions')).body, 'transactions')[0].id).toBe(tx.id);
    const found = list((await api.get(`/v1/transactions/search?filters[status]=pending&customer_id=${c.id}`)).body, 'transactions');
    expect(found.map((x: Json) => x.id)).toEqual([tx.id]);

    const upd = await api.put(`/v1/transactions/${tx.id}`, { description: 'Order 1 bis' });
    const updated = single(upd.body, 'transaction');
    expect(updated.description).toBe('Order 1 bis');
    expect(updated).not.toHaveProperty('mode');

    const token = await api.post(`/v1/transactions/${tx.id}/token`);
    expect(token.status).toBe(200);
    expect(Object.keys(token.body).sort()).toEqual(['token', 'url']);
    expect(token.body.url).toMatch(/^http/);

    const sent = await api.post('/v1/transactions/mtn_open', { token: token.body.token, phone_number: { number: '64000003', country: 'bj' } });
    expect(sent.status).toBe(200);
    const intents = enveloped ? sent.body['v1/payment_intents'] : sent.body;
    expect(Array.isArray(intents)).toBe(true);
    expect(intents[0]).toMatchObject({ reference: tx.reference, status: 'pending', mode: 'mtn_open', amount: 2000 });
    if (enveloped) expect(intents[0].klass).toBe('v1/payment_intent');

    // The older path of the send step.
    const again = await api.post('/v1/moov', { token: token.body.token });
    expect(again.status).toBe(200);
    expect(many(again.body, 'payment_intents')[0].mode).toBe('moov');

    const deleted = single((await api.del(`/v1/transactions/${tx.id}`)).body, 'transaction');
    expect(deleted.deleted_at).toEqual(expect.any(String));
    expect(list((await api.get('/v1/transactions')).body, 'transactions').map((x: Json) => x.id)).not.toContain(tx.id);
  });

  it('creates, reads, updates, lists, searches, starts and deletes payouts', async () => {
    const c = await newCustomer();
    const p1 = single((await api.post('/v1/payouts', { amount: 5000, currency: { iso: 'XOF' }, customer: { id: c.id }, mode: 'mtn_open' })).body, 'payout');
    expect(p1).toMatchObject({ status: 'pending', amount: 5000, mode: 'mtn_open' });
    const p2 = single((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'xof' }, customer: { id: c.id } })).body, 'payout');
    const p3 = single((await api.post('/v1/payouts', { amount: 300, currency: { iso: 'XOF' } })).body, 'payout');

    expect(single((await api.get(`/v1/payouts/${p1.id}`)).body, 'payout').id).toBe(p1.id);
    expect(single((await api.put(`/v1/payouts/${p2.id}`, { amount: 150, mode: 'moov' })).body, 'payout')).toMatchObject({ amount: 150, mode: 'moov' });
    expect(list((await api.get('/v1/payouts?per_page=2')).body, 'payouts').map((x: Json) => x.id)).toEqual([p3.id, p2.id]);

    // Bare array, as the spec shows.
    const bare = await api.put('/v1/payouts/start', [{ id: p1.id }]);
    expect(bare.status).toBe(200);
    const startedA = enveloped ? bare.body['v1/payouts'] : bare.body;
    expect(startedA.map((x: Json) => [x.id, x.status])).toEqual([[p1.id, 'started']]);
    // `{payouts: [...]}`, as client libraries send.
    const wrapped = await api.put('/v1/payouts/start', { payouts: [{ id: p2.id }, { id: p3.id, phone_number: { number: '64000001', country: 'BJ' } }] });
    expect(wrapped.status).toBe(200);
    expect(many(wrapped.body, 'payouts').map((x: Json) => x.id)).toEqual([p2.id, p3.id]);

    const searched = list((await api.get(`/v1/payouts/search?status=started&customer_id=${c.id}`)).body, 'payouts');
    expect(searched.map((x: Json) => x.id).sort()).toEqual([p1.id, p2.id].sort());

    const p4 = single((await api.post('/v1/payouts', { amount: 300, currency: { iso: 'XOF' } })).body, 'payout');
    expect(single((await api.del(`/v1/payouts/${p4.id}`)).body, 'payout').deleted_at).toEqual(expect.any(String));
  });

  it('reads currencies, with an array of one for a single currency when plain', async () => {
    const currencies = list((await api.get('/v1/currencies')).body, 'currencies');
    const xof = currencies.find((c: Json) => c.iso === 'XOF');
    expect(xof).toMatchObject({ iso: 'XOF', code: 952, name: 'FCFA', suffix: 'CFA', default: true, modes: expect.arrayContaining(['mtn', 'moov', 'mtn_ci', 'moov_tg', 'mtn_open']) });
    expect(xof).toHaveProperty('prefix');
    expect(arrayOfOne((await api.get(`/v1/currencies/${xof.id}`)).body, 'currency').iso).toBe('XOF');
    // The gateway reads currencies by id here (the spec's endpoint 13): an unknown id must be a 404, its "not found".
    expect((await api.get('/v1/currencies/999999999')).status).toBe(404);
  });

  it('creates, reads, lists, updates and deletes webhooks, showing the secret only at creation', async () => {
    const res = await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', enabled: false });
    expect(res.status).toBe(201);
    const w = single(res.body, 'webhook');
    expect(w).toMatchObject({ url: 'http://127.0.0.1:9/hook', enabled: false, ssl_verify: false, disable_on_error: false, http_headers: false });
    expect(w.secret).toEqual(expect.any(String));
    const given = single((await api.post('/v1/webhooks', { url: 'https://example.com/h', secret: 'my-secret', enabled: false })).body, 'webhook');
    expect(given.secret).toBe('my-secret');

    const read = arrayOfOne((await api.get(`/v1/webhooks/${w.id}`)).body, 'webhook');
    expect(read.id).toBe(w.id);
    expect(read).not.toHaveProperty('secret');
    expect(list((await api.get('/v1/webhooks')).body, 'webhooks').map((x: Json) => x.id)).toEqual([given.id, w.id]);
    expect(single((await api.put(`/v1/webhooks/${w.id}`, { disable_on_error: true })).body, 'webhook').disable_on_error).toBe(true);
    expect((await api.del(`/v1/webhooks/${w.id}`)).status).toBe(200);
    expect((await api.get(`/v1/webhooks/${w.id}`)).status).toBe(404);
    await api.del(`/v1/webhooks/${given.id}`);
  });

  it('lists events by type and object id and reads one as an array of one when plain', async () => {
    const c = await newCustomer();
    const events = list((await api.get(`/v1/events?filters[type]=customer.created&object_id=${c.id}`)).body, 'events');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'customer.created', object_id: c.id, account_id: c.account_id });
    expect(events[0].entity).toMatchObject({ id: c.id, email: c.email });
    const read = arrayOfOne((await api.get(`/v1/events/${events[0].id}`)).body, 'event');
    expect(read.id).toBe(events[0].id);
  });

  it('logs every request of the account without the Authorization header or any secret', async () => {
    await api.post('/v1/webhooks', { url: 'https://example.com/h', secret: 'hush-hush', enabled: false });
    await api.get('/v1/currencies?locale=fr');
    const logs = list((await api.get('/v1/logs?per_page=5')).body, 'logs');
    const [currencies, webhook] = logs;
    expect(currencies).toMatchObject({ method: 'GET', url: '/v1/currencies?locale=fr', status: 200, version: 'v1', query: 'locale=fr', ip_address: expect.any(String), source: 'api' });
    expect(webhook).toMatchObject({ method: 'POST', url: '/v1/webhooks', status: 201 });
    expect(JSON.parse(webhook.body)).toMatchObject({ url: 'https://example.com/h', secret: '[REDACTED]' });
    const everything = JSON.stringify((await api.get('/v1/logs?per_page=100')).body);
    expect(everything).not.toContain('hush-hush');
    expect(everything).not.toContain(api.key);
    expect(arrayOfOne((await api.get(`/v1/logs/${currencies.id}`)).body, 'log').id).toBe(currencies.id);
  });

  it('returns the caller account from GET /v1/accounts', async () => {
    const res = await api.get('/v1/accounts');
    expect(res.status).toBe(200);
    const accounts = list(res.body, 'accounts');
    expect(accounts).toHaveLength(1);
    const c = await newCustomer();
    expect(accounts[0]).toMatchObject({ id: c.account_id, environment: 'sandbox' });
    expect(JSON.stringify(accounts[0])).not.toContain(api.key);
  });

  it('accepts form-encoded bodies with bracket keys', async () => {
    const c = await newCustomer();
    const tx = await api.post('/v1/transactions', `amount=1500&currency[iso]=XOF&customer[id]=${c.id}&description=Form`, { form: true });
    expect(tx.status).toBe(201);
    expect(single(tx.body, 'transaction')).toMatchObject({ amount: 1500, description: 'Form', customer_id: c.id });
    const p = single((await api.post('/v1/payouts', 'amount=700&currency[iso]=XOF', { form: true })).body, 'payout');
    const q = single((await api.post('/v1/payouts', 'amount=800&currency[iso]=XOF', { form: true })).body, 'payout');
    const item = (id: number) => `payouts[][id]=${id}&payouts[][phone_number][number]=64000001&payouts[][phone_number][country]=bj`;
    const started = await api.put('/v1/payouts/start', `${item(p.id)}&${item(q.id)}`, { form: true });
    expect(started.status).toBe(200);
    expect(many(started.body, 'payouts').map((x: Json) => x.id)).toEqual([p.id, q.id]);
  });

  it('pages newest first with a documented default and maximum per_page', async () => {
    const pager = api.as(`sk_sandbox_pages_${style}`);
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await pager.post('/v1/payouts', { amount: 100 + i, currency: { iso: 'XOF' } });
      ids.push(one(r.body, 'payout').id);
    }
    const first = await pager.get('/v1/payouts');
    expect(many(first.body, 'payouts')).toHaveLength(25);
    expect(many(first.body, 'payouts')[0].id).toBe(ids[29]);
    const second = await pager.get('/v1/payouts?page=2&per_page=25');
    expect(many(second.body, 'payouts').map((x: Json) => x.id)).toEqual(ids.slice(0, 5).reverse());
    if (enveloped) {
      expect(first.body.meta).toEqual({ current_page: 1, next_page: 2, prev_page: null, per_page: 25, total_pages: 2, total_count: 30 });
      expect(second.body.meta).toMatchObject({ current_page: 2, next_page: null, prev_page: 1 });
    }
    const clamped = await pager.get('/v1/payouts?per_page=500');
    expect(many(clamped.body, 'payouts')).toHaveLength(30);
    if (enveloped) expect(clamped.body.meta.per_page).toBe(100);
    expect((await pager.get('/v1/payouts?page=0')).status).toBe(422);
  });

  it('filters searches by a created-at range, inclusive', async () => {
    const ranged = api.as(`sk_sandbox_range_${style}`);
    const a = one((await ranged.post('/v1/transactions', { amount: 100, currency: { iso: 'XOF' } })).body, 'transaction');
    await new Promise((r) => setTimeout(r, 15));
    const b = one((await ranged.post('/v1/transactions', { amount: 200, currency: { iso: 'XOF' } })).body, 'transaction');
    const after = many((await ranged.get(`/v1/transactions/search?created_after=${encodeURIComponent(b.created_at)}`)).body, 'transactions');
    expect(after.map((x: Json) => x.id)).toEqual([b.id]);
    const before = many((await ranged.get(`/v1/transactions/search?filters[created_before]=${encodeURIComponent(a.created_at)}`)).body, 'transactions');
    expect(before.map((x: Json) => x.id)).toEqual([a.id]);
    expect((await ranged.get('/v1/transactions/search?created_after=yesterday')).status).toBe(422);
  });
});
