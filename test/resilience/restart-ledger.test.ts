/**
 * One gateway without Redis receives signed webhooks, is SIGKILLed, and is started again on the same data folder.
 * The provider's redeliveries of what it had taken are duplicates still (published once in all), and an older
 * version of the object that arrives after the restart is not published over the newer one. With the embedded
 * emulator, new at every start and numbering its events from 1 again, the new run's events are news.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { gatewayReady, spawnMain, welcomePrinted, type GatewayProcess } from '../realtime/processes.js';
import { postWebhook, sleep, subscribeLive, transactionEvent, wsClient, type Subscription } from '../realtime/support.js';

const SECRET = 'whsec_restart_ledger_secret';
const EVENTS = 'subscription { paymentEvent { id } }';
const UPDATES = 'subscription ($id: ID) { transactionUpdated(id: $id) { status } }';

describe('a gateway without Redis SIGKILLed between webhooks, restarted on the same data folder', () => {
  let emulator: RunningEmulator;
  let dataDir: string;
  const started: GatewayProcess[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-ledger-'));
  });
  afterAll(async () => {
    for (const g of started) g.child.kill('SIGKILL');
    await emulator?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Reconciliation off: what subscribers see is what the webhooks brought, nothing re-read.
  const env = () => ({ DATA_DIR: dataDir, PAYMENTS_API_URL: emulator.url, WEBHOOK_SECRETS: SECRET, RECONCILE_READS_PER_SECOND: '0', LOG_LEVEL: 'info' });
  const start = async () => {
    const gateway = await spawnMain(env(), gatewayReady);
    started.push(gateway);
    return { gateway, port: Number(gateway.found.port), wsUrl: `ws://127.0.0.1:${gateway.found.port}/graphql` };
  };
  const watch = async (wsUrl: string, key: string, transactionId: number) => {
    const { client, connected } = wsClient(wsUrl, key);
    await connected;
    const events = await subscribeLive<{ paymentEvent: { id: string } }>(wsUrl, client, EVENTS);
    const updates = await subscribeLive<{ transactionUpdated: { status: string } }>(wsUrl, client, UPDATES, { id: String(transactionId) });
    return { client, events, updates };
  };
  const ids = (s: Subscription<{ paymentEvent: { id: string } }>) => s.values.map((v) => v.paymentEvent.id);

  it('publishes no redelivery a second time, and no older version over a newer one', async () => {
    const key = newKey('ledger');
    const f = factories(emulator, key);
    const transaction = await f.transaction({ customer: { id: (await f.customer()).id } });
    const accounts = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
    const accountId = accounts['v1/accounts']![0]!.id;
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    const at = (status: string, ms: number) => transactionEvent({ accountId, transaction: { ...transaction, status, updated_at: new Date(ms).toISOString() } });
    const approved = at('approved', t0 + 1000);
    const pendingEarlier = at('pending', t0 + 500);
    const transferred = at('transferred', t0 + 2000);
    const idOf = (body: string) => String((JSON.parse(body) as { id: number }).id);

    const first = await start();
    const before = await watch(first.wsUrl, key, transaction.id);
    expect((await postWebhook(first.port, approved, { secret: SECRET })).status).toBe(200);
    await before.events.nth(1);
    await before.updates.nth(2);
    const exited = once(first.gateway.child, 'exit');
    first.gateway.child.kill('SIGKILL');
    await exited;

    const second = await start();
    const after = await watch(second.wsUrl, key, transaction.id);
    // The provider redelivers what it never heard answered, and what it did; an older state comes late.
    const redelivered = await postWebhook(second.port, approved, { secret: SECRET });
    const late = await postWebhook(second.port, pendingEarlier, { secret: SECRET });
    const next = await postWebhook(second.port, transferred, { secret: SECRET });
    expect([redelivered.status, late.status, next.status]).toEqual([200, 200, 200]);
    expect(redelivered.json).toMatchObject({ duplicate: true });
    await after.updates.nth(2);
    await after.events.nth(2);
    await sleep(300);

    const seen = [...ids(before.events), ...ids(after.events)];
    const seenTwice = seen.filter((id, i) => seen.indexOf(id) !== i);
    expect(seenTwice).toEqual([]);
    expect(seen).toEqual([idOf(approved), idOf(pendingEarlier), idOf(transferred)]);
    // The state at subscribe time first (the emulator's), then only what is newer than every version seen.
    expect(before.updates.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED']);
    expect(after.updates.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'TRANSFERRED']);
    await after.client.dispose();
    await second.gateway.stop();
  }, 90_000);
});

describe('npm start (the embedded emulator) SIGKILLed and started again on the same data folder', () => {
  let dataDir: string;
  const started: GatewayProcess[] = [];
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-embedded-'));
  });
  afterAll(() => {
    for (const g of started) g.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** One run: a customer created through the gateway, and the event id its webhook brought to a subscriber. */
  const oneRun = async (): Promise<{ gateway: GatewayProcess; eventId: string }> => {
    const gateway = await spawnMain({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, welcomePrinted);
    started.push(gateway);
    const { url, key } = gateway.found as { url: string; key: string };
    const wsUrl = url.replace(/^http/, 'ws');
    const { client, connected } = wsClient(wsUrl, key);
    await connected;
    const events = await subscribeLive<{ paymentEvent: { id: string; type: string } }>(wsUrl, client, 'subscription { paymentEvent(types: ["customer.created"]) { id type } }');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: 'mutation { createCustomer(input: { firstname: "Ada", lastname: "L", email: "ada.embedded@example.com" }) { customer { id } } }' }),
    });
    expect(res.status).toBe(200);
    const event = await events.nth(1, 15_000);
    await client.dispose();
    return { gateway, eventId: event.paymentEvent.id };
  };

  it('publishes the new run\'s events, whose ids the previous run used too', async () => {
    const first = await oneRun();
    const exited = once(first.gateway.child, 'exit');
    first.gateway.child.kill('SIGKILL');
    await exited;
    const second = await oneRun();
    expect(second.eventId).toBe(first.eventId);
    await second.gateway.stop();
  }, 120_000);
});
