import { afterEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, one, startReceiver, verifySignature, waitFor, type Api, type Receiver } from './helpers.js';

describe('events delivered to webhooks', () => {
  let emu: RunningEmulator | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await emu?.stop();
    await receiver?.close();
    emu = receiver = undefined;
  });

  async function setup(status?: (n: number) => number): Promise<{ api: Api; receiver: Receiver }> {
    receiver = await startReceiver(status);
    const started = await emulator();
    emu = started.emu;
    return { api: started.api, receiver };
  }

  it('POSTs each event signed with the webhook secret; the signature verifies and a tampered body does not', async () => {
    const { api, receiver } = await setup();
    const hook = one((await api.post('/v1/webhooks', { url: receiver.url })).body, 'webhook');
    const c = one((await api.post('/v1/customers', { firstname: 'W', lastname: 'H', email: 'wh@example.com' })).body, 'customer');

    const delivery = await waitFor(() => receiver.received[0], 3000, 'a delivery');
    expect(delivery.json).toMatchObject({
      id: expect.any(Number),
      name: 'customer.created',
      type: 'customer.created',
      object: 'customer',
      object_id: c.id,
      account_id: c.account_id,
      created_at: expect.any(String),
      entity: { id: c.id, email: 'wh@example.com' },
    });
    const header = delivery.headers['x-fedapay-signature'] as string;
    expect(header).toMatch(/^t=\d+,s=[0-9a-f]{64}$/);
    expect(verifySignature(header, delivery.raw, hook.secret)).toBe(true);
    expect(verifySignature(header, delivery.raw.replace('wh@example.com', 'evil@example.com'), hook.secret)).toBe(false);
    expect(verifySignature(header, delivery.raw, 'another-secret')).toBe(false);
    expect(verifySignature(header.replace(/t=\d+/, 't=1'), delivery.raw, hook.secret)).toBe(false);
  });

  it('uses the secret given at creation and skips disabled webhooks', async () => {
    const { api, receiver } = await setup();
    await api.post('/v1/webhooks', { url: receiver.url, secret: 'whsec_given' });
    await api.post('/v1/webhooks', { url: receiver.url.replace('/hooks', '/disabled'), enabled: false });
    await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } });
    const d = await waitFor(() => receiver.received[0]);
    expect(verifySignature(d.headers['x-fedapay-signature'] as string, d.raw, 'whsec_given')).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(receiver.received.map((r) => r.json.type)).toEqual(['payout.created']);
  });

  it('retries a failed delivery with backoff until it succeeds', async () => {
    const { api, receiver } = await setup((n) => (n < 3 ? 500 : 200));
    await api.post('/v1/webhooks', { url: receiver.url });
    await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } });
    await waitFor(() => receiver.received.length >= 3 || undefined, 3000, 'three attempts');
    expect(new Set(receiver.received.map((r) => r.json.id)).size).toBe(1);
    expect(receiver.received.map((r) => r.headers['x-emulator-delivery-attempt'])).toEqual(['1', '2', '3']);
    const attempts = (await fetch(`${emu?.url}/_emulator/deliveries`).then((r) => r.json())) as { deliveries: { ok: boolean }[] };
    expect(attempts.deliveries.map((d) => d.ok)).toEqual([false, false, true]);
  });

  it('forgets the recorded deliveries when told to over the admin API', async () => {
    const { api, receiver } = await setup();
    await api.post('/v1/webhooks', { url: receiver.url });
    await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } });
    await waitFor(() => receiver.received[0]);
    const deliveries = async () => ((await fetch(`${emu?.url}/_emulator/deliveries`).then((r) => r.json())) as { deliveries: unknown[] }).deliveries;
    expect(await deliveries()).toHaveLength(1);
    const cleared = await fetch(`${emu?.url}/_emulator/deliveries`, { method: 'DELETE' });
    expect([cleared.status, await cleared.json()]).toEqual([200, { deliveries: [] }]);
    expect(await deliveries()).toEqual([]);
  });

  it('disables a disable_on_error webhook at its first failure', async () => {
    const { api, receiver } = await setup(() => 500);
    const hook = one((await api.post('/v1/webhooks', { url: receiver.url, disable_on_error: true })).body, 'webhook');
    await api.post('/v1/payouts', { amount: 100, currency: { iso: 'XOF' } });
    await waitFor(() => receiver.received[0]);
    const after = await waitFor(async () => {
      const w = one((await api.get(`/v1/webhooks/${hook.id}`)).body, 'webhook');
      return w.enabled === false ? w : undefined;
    });
    expect(after.enabled).toBe(false);
    await api.post('/v1/payouts', { amount: 200, currency: { iso: 'XOF' } });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
  });

  it('forwards every account event to EMULATOR_FORWARD_TO signed with the forward secret', async () => {
    const r = await startReceiver();
    receiver = r;
    const started = await emulator({ forwardTo: r.url, forwardSecret: 'fwd-secret' });
    emu = started.emu;
    await started.api.as('sk_sandbox_one').post('/v1/customers', { firstname: 'A', lastname: 'B', email: 'one@example.com' });
    await started.api.as('sk_sandbox_two').post('/v1/customers', { firstname: 'A', lastname: 'B', email: 'two@example.com' });
    await waitFor(() => r.received.length >= 2 || undefined);
    expect(new Set(r.received.map((d) => d.json.account_id)).size).toBe(2);
    for (const d of r.received) expect(verifySignature(d.headers['x-fedapay-signature'] as string, d.raw, 'fwd-secret')).toBe(true);
  });

  it('starts forwarding when told to after start, and only events from then on', async () => {
    const r = await startReceiver();
    receiver = r;
    const started = await emulator({});
    emu = started.emu;
    await started.api.as('sk_sandbox_one').post('/v1/customers', { firstname: 'A', lastname: 'B', email: 'before@example.com' });
    started.emu.forwardEventsTo(r.url, 'late-secret');
    await started.api.as('sk_sandbox_one').post('/v1/customers', { firstname: 'A', lastname: 'B', email: 'after@example.com' });
    await waitFor(() => r.received.length >= 1 || undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.received.map((d) => (d.json.entity as { email: string }).email)).toEqual(['after@example.com']);
    expect(verifySignature(r.received[0]!.headers['x-fedapay-signature'] as string, r.received[0]!.raw, 'late-secret')).toBe(true);
  });
});
