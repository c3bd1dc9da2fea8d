import { afterEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { DEMO_API_KEY } from '../../emulator/seed.js';
import { emulator, many, type Json } from './helpers.js';

/** Two fresh emulators seeded moments apart: the demo data must match row for row. */
describe('demo seed', () => {
  const running: RunningEmulator[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.stop()));
  });

  async function snapshot(): Promise<{ start: number; rows: Record<string, Json[]> }> {
    const start = Date.now();
    const { emu, api } = await emulator({ seed: true });
    running.push(emu);
    const demo = api.as(DEMO_API_KEY);
    const get = async (path: string, key: string): Promise<Json[]> => many((await demo.get(path)).body, key);
    const rows = {
      customers: await get('/v1/customers?per_page=100', 'customers'),
      transactions: await get('/v1/transactions?per_page=100', 'transactions'),
      payouts: await get('/v1/payouts?per_page=100', 'payouts'),
    };
    return { start, rows };
  }

  /** Secrets-like random strings the engine mints for every row (references, keys, receipt tokens) are left out. */
  const RANDOM_FIELDS = new Set(['reference', 'transaction_key', 'receipt_url']);

  /** Times become ages relative to the seeding moment (rounded to the minute). */
  function comparable(s: { start: number; rows: Record<string, Json[]> }): unknown {
    return JSON.parse(
      JSON.stringify(s.rows, (k, v) => {
        if (RANDOM_FIELDS.has(k)) return undefined;
        return typeof v === 'string' && /_at$/.test(k) && !Number.isNaN(Date.parse(v)) ? Math.round((Date.parse(v) - s.start) / 60_000) : v;
      }),
    );
  }

  it('makes the same ids, amounts, statuses and relative dates every time', async () => {
    const a = await snapshot();
    const b = await snapshot();
    expect(comparable(b)).toEqual(comparable(a));
    expect(a.rows.transactions).toHaveLength(36);
  });

  it('covers every status and spreads created_at over the last 60 days', async () => {
    const { start, rows } = await snapshot();
    const statuses = (kind: string) => new Set((rows[kind] ?? []).map((r) => r.status));
    expect(statuses('transactions')).toEqual(new Set(['pending', 'approved', 'declined', 'canceled', 'refunded', 'transferred']));
    expect(statuses('payouts')).toEqual(new Set(['pending', 'scheduled', 'started', 'sent', 'failed']));
    const ages = [...(rows.transactions ?? []), ...(rows.payouts ?? [])].map((r) => (start - Date.parse(r.created_at)) / 86_400_000);
    expect(Math.max(...ages)).toBeGreaterThan(30);
    expect(Math.max(...ages)).toBeLessThanOrEqual(60);
    expect(Math.min(...ages)).toBeGreaterThanOrEqual(0);
    for (const c of rows.customers ?? []) expect(c.email).toMatch(/@demo\.example$/);
  });
});
