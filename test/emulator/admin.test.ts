import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadEmulatorOptionsFromEnv, parseEmulatorEnv, startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { emulator, one, type Api } from './helpers.js';

describe('admin API and faults', () => {
  let emu: RunningEmulator;
  let api: Api;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${emu.url}/_emulator${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

  beforeAll(async () => {
    ({ emu, api } = await emulator());
  });
  afterAll(() => emu.stop());
  beforeEach(async () => {
    await admin('DELETE', '/faults');
    await admin('DELETE', '/stats');
  });

  it('counts every /v1 request by route pattern, refused ones included, and resets the counters', async () => {
    const c = one((await api.post('/v1/customers', { firstname: 'A', lastname: 'B', email: 's@example.com' })).body, 'customer');
    await api.get(`/v1/customers/${c.id}`);
    await api.get(`/v1/customers/${c.id}`, { auth: null });
    await api.get('/v1/payouts/search');
    await api.put('/v1/payouts/start', []);
    await api.post('/v1/transactions/mtn', {});
    await api.get('/v1/currencies');
    const { body } = await admin('GET', '/stats');
    expect(body).toEqual({
      total: 7,
      routes: {
        'POST /v1/customers': 1,
        'GET /v1/customers/:id': 2,
        'GET /v1/payouts/search': 1,
        'PUT /v1/payouts/start': 1,
        'POST /v1/transactions/:mode': 1,
        'GET /v1/currencies': 1,
      },
    });
    expect(emu.stats()).toEqual(body);
    await admin('DELETE', '/stats');
    expect(emu.stats()).toEqual({ total: 0, routes: {} });
  });

  it('answers with an injected status for the next n requests, still counting them', async () => {
    const { status, body } = await admin('POST', '/faults', { route: 'GET /v1/currencies', status: 503, times: 2 });
    expect(status).toBe(201);
    expect(body.id).toEqual(expect.any(Number));
    expect((await api.get('/v1/currencies')).status).toBe(503);
    expect((await api.get('/v1/currencies')).status).toBe(503);
    expect((await api.get('/v1/currencies')).status).toBe(200);
    expect(emu.stats().routes['GET /v1/currencies']).toBe(3);
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
  });

  it('answers 429 with Retry-After', async () => {
    await admin('POST', '/faults', { route: '*', status: 429, retryAfter: 7, body: { message: 'slow down', errors: {} } });
    const res = await api.get('/v1/customers');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.body).toEqual({ message: 'slow down', errors: {} });
  });

  it('resets the connection', async () => {
    await admin('POST', '/faults', { route: 'GET /v1/accounts', reset: true, times: 1 });
    await expect(api.get('/v1/accounts')).rejects.toThrow();
    expect((await api.get('/v1/accounts')).status).toBe(200);
  });

  it('hangs until the client gives up', async () => {
    await admin('POST', '/faults', { route: 'GET /v1/events', hang: true, times: 1 });
    const res = fetch(`${emu.url}/v1/events`, { headers: { authorization: `Bearer ${api.key}` }, signal: AbortSignal.timeout(150) });
    await expect(res).rejects.toThrow();
  });

  it('answers a malformed 200', async () => {
    await admin('POST', '/faults', { route: 'GET /v1/customers/:id', malformed: true });
    const res = await api.get('/v1/customers/1');
    expect(res.status).toBe(200);
    expect(res.body['v1/customer'].id).toBe('oops');
  });

  it('adds latency to a route', async () => {
    await admin('POST', '/faults', { route: 'GET /v1/webhooks', latencyMs: 120 });
    const t0 = Date.now();
    expect((await api.get('/v1/webhooks')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110);
  });

  it('applies a fault with probability 0 never', async () => {
    await admin('POST', '/faults', { route: '*', status: 500, probability: 0 });
    expect((await api.get('/v1/currencies')).status).toBe(200);
  });

  it('refuses an invalid fault or an unknown route', async () => {
    expect((await admin('POST', '/faults', { route: 'GET /v1/customers/{id}', status: 500 })).status).toBe(400);
    expect((await admin('POST', '/faults', { route: '*', status: 42 })).status).toBe(400);
  });

  it('resets the whole state, keeping ids growing', async () => {
    const before = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } })).body, 'payout');
    await admin('POST', '/faults', { route: 'GET /v1/logs', status: 500 });
    expect((await admin('POST', '/reset')).status).toBe(200);
    expect((await api.get(`/v1/payouts/${before.id}`)).status).toBe(404);
    expect((await admin('GET', '/faults')).body.faults).toEqual([]);
    const after = one((await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } })).body, 'payout');
    expect(after.id).toBeGreaterThan(before.id);
    expect(emu.stats().total).toBe(2);
  });

  it('seeds demo data over the admin API', async () => {
    const { body } = await admin('POST', '/seed', { apiKey: 'sk_sandbox_admin_seed' });
    expect(body.apiKey).toBe('sk_sandbox_admin_seed');
    expect((await api.as('sk_sandbox_admin_seed').get('/v1/customers')).body.meta.total_count).toBe(12);
  });

  it('answers a seed with 201, takes api_key too, and refuses a key outside the sandbox with 400', async () => {
    expect(await admin('POST', '/seed', { api_key: 'sk_sandbox_snake_seed' })).toEqual({ status: 201, body: { apiKey: 'sk_sandbox_snake_seed' } });
    const refused = await admin('POST', '/seed', { apiKey: 'sk_live_nope' });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual({ apiKey: ['must start with sk_sandbox_'] });
  });

  it('keeps the admin API out of /v1', async () => {
    expect((await api.get('/v1/_emulator/stats')).status).toBe(404);
  });
});

describe('starting and configuring', () => {
  it('starts on a free port and stops cleanly, hung sockets and timers included', async () => {
    const emu = await startEmulator({ settleMs: 60_000, faults: [{ route: '*', hang: true }] });
    expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const socket = net.connect(emu.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /v1/currencies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_sandbox_x\r\n\r\n');
    const closed = new Promise((r) => socket.once('close', r));
    await new Promise((r) => setTimeout(r, 30));
    await emu.stop();
    await closed;
    await emu.stop(); // idempotent
  });

  it('reads the environment, with defaults', () => {
    const options = loadEmulatorOptionsFromEnv({});
    expect(options).toMatchObject({ port: 4010, responseStyle: 'enveloped', listParams: 'lenient', settleMs: 1500, latencyMs: 0, seed: false });
    const custom = loadEmulatorOptionsFromEnv({
      EMULATOR_PORT: '0',
      EMULATOR_RESPONSE_STYLE: 'plain',
      EMULATOR_LIST_PARAMS: 'strict',
      EMULATOR_LATENCY_MS: '5',
      EMULATOR_LATENCY_JITTER_MS: '3',
      EMULATOR_SETTLE_MS: '10',
      EMULATOR_FORWARD_TO: 'http://127.0.0.1:4000/webhooks/payments',
      EMULATOR_FORWARD_SECRET: 's',
      EMULATOR_SEED: 'true',
      EMULATOR_FAULTS: '[{"route":"GET /v1/customers/:id","status":503,"times":1}]',
    });
    expect(custom).toMatchObject({ port: 0, responseStyle: 'plain', listParams: 'strict', latencyMs: 5, latencyJitterMs: 3, settleMs: 10, seed: true, forwardSecret: 's' });
    expect(custom.faults).toEqual([{ route: 'GET /v1/customers/:id', status: 503, times: 1 }]);
  });

  it('reports every invalid variable at once', () => {
    const result = parseEmulatorEnv({
      EMULATOR_PORT: 'eighty',
      EMULATOR_RESPONSE_STYLE: 'xml',
      EMULATOR_LIST_PARAMS: 'loose',
      EMULATOR_SETTLE_MS: '-1',
      EMULATOR_FORWARD_TO: 'http://127.0.0.1:1/x',
      EMULATOR_FAULTS: '[{"status": 500}]',
    });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems.join('\n');
    for (const name of ['EMULATOR_PORT', 'EMULATOR_RESPONSE_STYLE', 'EMULATOR_LIST_PARAMS', 'EMULATOR_SETTLE_MS', 'EMULATOR_FORWARD_SECRET', 'EMULATOR_FAULTS']) {
      expect(problems).toContain(name);
    }
    expect(() => loadEmulatorOptionsFromEnv({ EMULATOR_PORT: 'x' })).toThrow(/EMULATOR_PORT/);
  });

  it('applies EMULATOR_FAULTS-style faults from the options', async () => {
    const emu = await startEmulator({ faults: [{ route: 'GET /v1/currencies', status: 502, times: 1 }] });
    const res = await fetch(`${emu.url}/v1/currencies`, { headers: { authorization: 'Bearer sk_sandbox_x' } });
    expect(res.status).toBe(502);
    await emu.stop();
  });
});
