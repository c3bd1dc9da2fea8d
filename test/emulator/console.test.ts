/**
 * The console's side of the admin API, over HTTP: the page is served only
 * when the console option is on and holds no token; what it lists (waiting
 * transactions and payouts, deliveries with their signature header) needs
 * the admin token like every admin route.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { eventually } from '../realtime/support.js';

const TOKEN = 'console-test-admin-token';

describe('the emulator console', () => {
  let withConsole: RunningEmulator;
  let without: RunningEmulator;
  let hook: http.Server;
  let hookUrl: string;

  beforeAll(async () => {
    hook = http.createServer((req, res) => req.resume().on('end', () => res.end()));
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
    withConsole = await startEmulator({ seed: true, console: true, adminToken: TOKEN, settleMs: 20, forwardTo: hookUrl, forwardSecret: 'whsec_console' });
    without = await startEmulator({ seed: true, adminToken: TOKEN });
  });
  afterAll(async () => {
    await withConsole?.stop();
    await without?.stop();
    await new Promise((r) => hook.close(r));
  });

  const admin = (emu: RunningEmulator, method: string, path: string, body?: unknown, token: string | null = TOKEN) =>
    fetch(`${emu.url}/_emulator/${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token === null ? {} : { 'x-emulator-admin-token': token }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('serves the page only when the console is on', async () => {
    const page = await fetch(`${withConsole.url}/_emulator/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('Payments emulator console');
    // Console off: the path is just an unknown admin route, behind the admin token like the others.
    expect((await fetch(`${without.url}/_emulator/console`)).status).toBe(401);
    expect((await admin(without, 'GET', 'console')).status).toBe(404);
  });

  it('lists waiting transactions and payouts only, and only with the admin token', async () => {
    expect((await admin(withConsole, 'GET', 'pending', undefined, null)).status).toBe(401);
    expect((await admin(withConsole, 'GET', 'pending', undefined, 'wrong')).status).toBe(401);
    const listed = (await (await admin(withConsole, 'GET', 'pending')).json()) as {
      transactions: { id: number; status: string; currency: string; customer: string | null }[];
      payouts: { id: number; status: string }[];
    };
    expect(listed.transactions.length).toBeGreaterThan(0);
    expect(new Set(listed.transactions.map((t) => t.status))).toEqual(new Set(['pending']));
    expect(listed.transactions.every((t) => t.currency === 'XOF' && typeof t.customer === 'string')).toBe(true);
    expect(listed.payouts.length).toBeGreaterThan(0);
    for (const p of listed.payouts) expect(['pending', 'scheduled', 'started', 'processing']).toContain(p.status);

    const first = listed.transactions[0]!;
    expect((await admin(withConsole, 'POST', `transactions/${first.id}/status`, { status: 'approved' })).status).toBe(200);
    const after = (await (await admin(withConsole, 'GET', 'pending')).json()) as typeof listed;
    expect(after.transactions.map((t) => t.id)).not.toContain(first.id);
    expect(after.transactions).toHaveLength(listed.transactions.length - 1);
  });

  it('lists each webhook delivery with the signature header it was sent with', async () => {
    const { transactions } = (await (await admin(withConsole, 'GET', 'pending')).json()) as { transactions: { id: number }[] };
    await admin(withConsole, 'POST', `transactions/${transactions[0]!.id}/status`, { status: 'declined' });
    const deliveries = await eventually(
      async () => ((await (await admin(withConsole, 'GET', 'deliveries')).json()) as { deliveries: { event_type: string; url: string; ok: boolean; signature: string }[] }).deliveries,
      (list) => list.some((d) => d.event_type === 'transaction.declined'),
    );
    const declined = deliveries.find((d) => d.event_type === 'transaction.declined')!;
    expect(declined).toMatchObject({ url: hookUrl, ok: true });
    expect(declined.signature).toMatch(/^t=\d+,s=[0-9a-f]{64}$/);
    expect(JSON.stringify(deliveries)).not.toContain('whsec_console');
  });
});
