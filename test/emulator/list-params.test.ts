import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, many, type Api, type Json } from './helpers.js';

/**
 * `listParams: 'strict'` plays a server that knows only the documented list
 * parameters: every filter is ignored (not refused), while `page` and
 * `per_page` still page. The lenient default reads the filters.
 */
describe.each(['lenient', 'strict'] as const)('list parameters, %s', (listParams) => {
  let emu: RunningEmulator;
  let api: Api;
  const ids: { customer: number; pending: number[]; canceled: number } = { customer: 0, pending: [], canceled: 0 };

  beforeAll(async () => {
    ({ emu, api } = await emulator({ listParams }));
    const c = (await api.post('/v1/customers', { firstname: 'Ama', lastname: 'Mensah', email: 'ama@example.com' })).body;
    ids.customer = (c['v1/customer'] ?? c).id;
    for (let i = 0; i < 3; i++) {
      const t = (await api.post('/v1/transactions', { amount: 100 + i, currency: { iso: 'XOF' }, customer: { id: ids.customer } })).body;
      ids.pending.push((t['v1/transaction'] ?? t).id);
    }
    const other = (await api.post('/v1/transactions', { amount: 900, currency: { iso: 'XOF' } })).body;
    ids.canceled = (other['v1/transaction'] ?? other).id;
    await api.put(`/v1/transactions/${ids.canceled}`, { status: 'canceled' });
  });
  afterAll(() => emu.stop());

  const idsOf = (body: Json, plural: string) => many(body, plural).map((x: Json) => x.id);
  const everyTransaction = () => [ids.canceled, ...ids.pending.slice().reverse()];

  it('filters searches only when lenient', async () => {
    const res = await api.get('/v1/transactions/search?filters[status]=canceled&customer_id=999999');
    expect(res.status).toBe(200);
    expect(idsOf(res.body, 'transactions')).toEqual(listParams === 'strict' ? everyTransaction() : []);
    const customers = await api.get('/v1/customers/search?filters[email]=nobody@example.com&filters[q]=zzz');
    expect(idsOf(customers.body, 'customers')).toEqual(listParams === 'strict' ? [ids.customer] : []);
    const events = await api.get(`/v1/events?filters[type]=customer.created&filters[object_id]=${ids.customer}`);
    const types = new Set(many(events.body, 'events').map((e: Json) => e.type));
    expect(types.size > 1).toBe(listParams === 'strict');
  });

  it('ignores a malformed filter in strict mode instead of refusing it', async () => {
    const res = await api.get('/v1/transactions/search?filters[created_after]=yesterday');
    expect(res.status).toBe(listParams === 'strict' ? 200 : 422);
  });

  it('still pages with page and per_page', async () => {
    const res = await api.get('/v1/transactions?page=2&per_page=2');
    expect(idsOf(res.body, 'transactions')).toEqual(everyTransaction().slice(2, 4));
    expect((await api.get('/v1/transactions?per_page=0')).status).toBe(422);
  });
});
