import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startInstances, type GatewayInstance } from './processes.js';
import { disposeLive, postWebhook, sleep, subscribeLive, transactionEvent, wsClient } from './support.js';

interface TransactionUpdated {
  transactionUpdated: { id: string; status: string; customer: { email: string } | null };
}
const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status customer { email } } }`;
const SECRET = 'whsec_shared_by_both_instances';

type Instance = GatewayInstance;

describeWith('redis-server', 'two gateway processes sharing a real redis-server', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    const env = { REDIS_URL: redis.url, PAYMENTS_API_URL: emulator.url, WEBHOOK_SECRETS: SECRET, LOG_LEVEL: 'info' };
    [a, b] = (await startInstances(env)) as [Instance, Instance];
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.process.stop(), b?.process.stop()]);
    await emulator?.stop();
    await redis?.stop();
  });

  async function subscribedOn(stack: Instance) {
    const key = newKey('scale');
    const f = factories(emulator, key);
    const customer = await f.customer();
    const transaction = await f.transaction({ customer: { id: customer.id } });
    const accounts = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
    const accountId = (accounts['v1/accounts'] ?? (accounts as unknown as { id: number }[]))[0]!.id;
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<TransactionUpdated>(stack.wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    const snapshot = (status: string, updatedAt: number) =>
      transactionEvent({ accountId, transaction: { ...transaction, status, updated_at: new Date(updatedAt).toISOString() } });
    return { client, sub, customer, snapshot };
  }

  it('delivers a webhook posted to one instance to a subscriber on the other, once, even when redelivered to either', async () => {
    const onB = await subscribedOn(b);
    const approved = onB.snapshot('approved', Date.now());
    expect((await postWebhook(a.port, approved, { secret: SECRET })).status).toBe(200);
    // The state at subscribe time comes first.
    expect((await onB.sub.nth(1)).transactionUpdated.status).toBe('PENDING');
    const first = await onB.sub.nth(2);
    expect(first.transactionUpdated).toMatchObject({ status: 'APPROVED', customer: { email: onB.customer.email } });

    // The same event again, to each instance: both know it was taken.
    const again = [await postWebhook(a.port, approved, { secret: SECRET }), await postWebhook(b.port, approved, { secret: SECRET })];
    expect(again.map((r) => [r.status, (r.json as { duplicate: boolean }).duplicate])).toEqual([
      [200, true],
      [200, true],
    ]);
    const later = onB.snapshot('transferred', Date.now() + 1000);
    await postWebhook(b.port, later, { secret: SECRET });
    await onB.sub.nth(3);
    await sleep(50);
    expect(onB.sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED', 'TRANSFERRED']);
    await disposeLive(b.wsUrl, onB.client);
  });

  it('keeps the order across instances: an older snapshot posted to the other instance does not roll back', async () => {
    const onA = await subscribedOn(a);
    const t0 = Date.now();
    await postWebhook(b.port, onA.snapshot('approved', t0 + 2000), { secret: SECRET });
    await postWebhook(a.port, onA.snapshot('pending', t0), { secret: SECRET });
    await postWebhook(b.port, onA.snapshot('transferred', t0 + 4000), { secret: SECRET });
    await onA.sub.nth(3);
    await sleep(50);
    expect(onA.sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED', 'TRANSFERRED']);
    await disposeLive(a.wsUrl, onA.client);
  });

  it('delivers an event once to a subscriber on the receiving instance too (at once, then skipped by its reader)', async () => {
    const onA = await subscribedOn(a);
    await postWebhook(a.port, onA.snapshot('approved', Date.now()), { secret: SECRET });
    await postWebhook(a.port, onA.snapshot('transferred', Date.now() + 1000), { secret: SECRET });
    await onA.sub.nth(3);
    await sleep(100);
    expect(onA.sub.values.map((v) => v.transactionUpdated.status)).toEqual(['PENDING', 'APPROVED', 'TRANSFERRED']);
    await disposeLive(a.wsUrl, onA.client);
  });
});
