import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../emulator/index.js';
import { emulator, waitFor } from './helpers.js';
import { SdkClient } from './sdk-client.js';

describe('a client written to the public client libraries conventions', () => {
  let emu: RunningEmulator;
  let sdk: SdkClient;

  beforeAll(async () => {
    ({ emu } = await emulator({ responseStyle: 'enveloped', settleMs: 30 }));
    sdk = new SdkClient(emu.url, 'sk_sandbox_sdk');
  });
  afterAll(() => emu.stop());

  it('creates a customer, a transaction, a token, sends it and sees it approved', async () => {
    const customer = await sdk.createCustomer({ firstname: 'Kofi', lastname: 'Annan', email: 'kofi@example.com', phone_number: { number: '64000001', country: 'BJ' } });
    const tx = await sdk.createTransaction({ description: 'Ticket', amount: 5000, currency: { iso: 'XOF' }, customer: { id: customer.id as number } });
    expect(tx.status).toBe('pending');
    const { token, url } = await sdk.generateToken(tx.id as number);
    expect(url).toContain(token);
    const intents = await sdk.sendNowWithToken('mtn_open', token);
    expect(intents[0]).toMatchObject({ status: 'pending', reference: tx.reference });
    const approved = await waitFor(async () => {
      const t = await sdk.retrieveTransaction(tx.id as number);
      return t.status === 'approved' ? t : undefined;
    });
    expect(approved.approved_at).toEqual(expect.any(String));
  });

  it('creates a payout, starts it and sees it sent', async () => {
    const customer = await sdk.createCustomer({ firstname: 'Yaa', lastname: 'Asantewaa', email: 'yaa@example.com', phone_number: { number: '64000001', country: 'bj' } });
    const payout = await sdk.createPayout({ amount: 2000, currency: { iso: 'XOF' }, customer: { id: customer.id as number }, mode: 'mtn_open' });
    const started = await sdk.startAll([{ id: payout.id as number }]);
    expect(started[0]).toMatchObject({ id: payout.id, status: 'started' });
    const sent = await waitFor(async () => {
      const p = await sdk.retrievePayout(payout.id as number);
      return p.status === 'sent' ? p : undefined;
    });
    expect(sent.sent_at).toEqual(expect.any(String));
  });

  it('records the X-Source header in the request logs', async () => {
    const res = await fetch(`${emu.url}/v1/logs?per_page=1`, { headers: { authorization: 'Bearer sk_sandbox_sdk' } });
    const body = (await res.json()) as { 'v1/logs': { source: string }[] };
    expect(body['v1/logs'][0]?.source).toBe('sdk-client-test');
  });
});
