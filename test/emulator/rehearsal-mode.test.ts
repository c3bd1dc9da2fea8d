/**
 * The emulator's live rehearsal: `sk_live_` keys are refused unless the mode
 * is asked for (its own option and variable, never the default), and then
 * each is an account of its own; the emulator `npm start` embeds never takes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEmulatorEnv, type RunningEmulator } from '../../emulator/index.js';
import { startEmbeddedEmulator } from '../../emulator/embedded.js';
import { resolveOptions } from '../../emulator/options.js';
import { emulator, one, type Api } from './helpers.js';

describe('the live rehearsal', () => {
  let sandbox: { emu: RunningEmulator; api: Api };
  let rehearsal: { emu: RunningEmulator; api: Api };

  beforeAll(async () => {
    sandbox = await emulator();
    rehearsal = await emulator({ liveRehearsal: true });
  });
  afterAll(async () => {
    await sandbox?.emu.stop();
    await rehearsal?.emu.stop();
  });

  it('is off by default: a live key is refused, and the refusal names the switch', async () => {
    const res = await sandbox.api.as('sk_live_rehearsal').get('/v1/accounts');
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Live keys are not accepted by the sandbox');
    expect(res.body.errors.authorization[0]).toContain('EMULATOR_LIVE_REHEARSAL=true');
    expect((await (await fetch(`${sandbox.emu.url}/healthz`)).json()) as unknown).toEqual({ status: 'ok' });
  });

  it('accepts live keys when on, each an account of its own beside the sandbox keys, and says so in /healthz', async () => {
    const live = rehearsal.api.as('sk_live_rehearsal');
    const accounts = await live.get('/v1/accounts');
    expect(accounts.status).toBe(200);
    const sandboxAccounts = await rehearsal.api.as('sk_sandbox_rehearsal').get('/v1/accounts');
    expect(sandboxAccounts.status).toBe(200);
    const account = (body: unknown) => (body as { 'v1/accounts': { id: number; environment: string }[] })['v1/accounts'][0]!;
    expect(account(accounts.body).id).not.toBe(account(sandboxAccounts.body).id);
    expect([account(accounts.body).environment, account(sandboxAccounts.body).environment]).toEqual(['live', 'sandbox']);
    // The secret it gives for a webhook is a live one, as the provider's would be.
    const webhook = one((await live.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook' })).body, 'webhook');
    expect(webhook.secret).toMatch(/^wh_live_/);

    // What one live key makes, another cannot read.
    const made = one((await live.post('/v1/transactions', { amount: 1000, currency: { iso: 'XOF' } })).body, 'transaction');
    expect((await live.get(`/v1/transactions/${made.id}`)).status).toBe(200);
    expect((await rehearsal.api.as('sk_live_someone_else').get(`/v1/transactions/${made.id}`)).status).toBe(404);
    expect((await rehearsal.api.as('sk_live_').get('/v1/accounts')).status).toBe(401);
    expect((await (await fetch(`${rehearsal.emu.url}/healthz`)).json()) as unknown).toEqual({ status: 'ok', liveRehearsal: true });
  });

  it('is read from EMULATOR_LIVE_REHEARSAL, off when unset, and a value that is not a yes or no is refused', () => {
    const on = parseEmulatorEnv({ EMULATOR_LIVE_REHEARSAL: 'true' });
    expect(on.ok && on.options.liveRehearsal).toBe(true);
    const unset = parseEmulatorEnv({});
    expect(unset.ok && unset.options.liveRehearsal).toBe(false);
    expect(parseEmulatorEnv({ EMULATOR_LIVE_REHEARSAL: 'live' })).toEqual({ ok: false, problems: ['EMULATOR_LIVE_REHEARSAL: EMULATOR_LIVE_REHEARSAL must be true or false'] });
  });

  it('is never taken by the emulator npm start embeds, whatever its options say', async () => {
    const embedded = await startEmbeddedEmulator(resolveOptions({ liveRehearsal: true, port: 0 }), false, '127.0.0.1');
    try {
      const res = await fetch(`${embedded.url}/v1/accounts`, { headers: { authorization: 'Bearer sk_live_rehearsal', 'x-emulator-admin-token': '' } });
      expect(res.status).toBe(401);
    } finally {
      await embedded.stop();
    }
  });
});
