/**
 * The emulator keeps the newest events and request logs of each account, not every one: each event holds a copy of
 * its object, so a busy account would otherwise only grow. One account's volume never drops another's rows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, many, type Api, type Json } from './helpers.js';

let running: RunningEmulator | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function createCustomers(api: Api, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api.post('/v1/customers', { firstname: 'Ama', lastname: `K${i}`, email: `ama${i}@example.com` });
    expect(res.status).toBe(201);
    ids.push(Number((res.body['v1/customer'] ?? res.body).id));
  }
  return ids;
}

const eventIds = async (api: Api): Promise<number[]> => many((await api.get('/v1/events?per_page=100')).body, 'events').map((e: Json) => Number(e.id));

describe('emulator retention', () => {
  it('keeps the newest events of an account within maxEventsPerAccount (plus a tenth, dropped in batches) and forgets the oldest', async () => {
    const started = await emulator({ maxEventsPerAccount: 10 });
    running = started.emu;
    const busy = started.api.as('sk_sandbox_busy');
    const quiet = started.api.as('sk_sandbox_quiet');
    await createCustomers(quiet, 2);
    const [first] = await eventIds(quiet);
    const customers = await createCustomers(busy, 30);
    const kept = await eventIds(busy);
    expect(kept.length).toBeGreaterThanOrEqual(10);
    expect(kept.length).toBeLessThanOrEqual(11);
    // The newest stay and the oldest go: the last customer's event is listed, the first's answers 404.
    const eventsOf = async (customerId: number) => many((await busy.get(`/v1/events?object_id=${customerId}`)).body, 'events').map((e: Json) => Number(e.id));
    const [newest] = await eventsOf(customers.at(-1)!);
    expect(newest).toBe(Math.max(...kept));
    expect(await eventsOf(customers[0]!)).toEqual([]);
    expect((await busy.get(`/v1/events/${Math.min(...kept) - 1}`)).status).toBe(404);
    // The quiet account's events are its own share: the busy one's volume dropped none of them.
    expect(await eventIds(quiet)).toHaveLength(2);
    expect((await quiet.get(`/v1/events/${first}`)).status).toBe(200);
  });

  it('keeps the newest request logs of an account within maxLogsPerAccount', async () => {
    const started = await emulator({ maxLogsPerAccount: 10 });
    running = started.emu;
    const api = started.api.as('sk_sandbox_logs');
    for (let i = 0; i < 30; i++) expect((await api.get(`/v1/currencies?i=${i}`)).status).toBe(200);
    const logs = many((await api.get('/v1/logs?per_page=100')).body, 'logs');
    expect(logs.length).toBeGreaterThanOrEqual(10);
    expect(logs.length).toBeLessThanOrEqual(11);
    // The last requests are the ones kept (a log of the logs read itself may come first).
    const numbers = logs.map((l: Json) => /[?&]i=(\d+)/.exec(String(l.url))?.[1]).filter((n: string | undefined) => n !== undefined).map(Number);
    expect(Math.min(...numbers)).toBeGreaterThanOrEqual(30 - 11);
    expect(Math.max(...numbers)).toBe(29);
  });
});
