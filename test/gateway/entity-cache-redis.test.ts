/**
 * The entity cache shared by two gateway instances through a real
 * redis-server: what one instance cached the other reads, a signed webhook
 * received by one instance evicts for both, and entries stay per key.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { encode } from '../../src/upstream/codec.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories, type RestObject } from '../support/factories.js';
import { emulatorAdmin, newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { postWebhook } from '../realtime/support.js';
import { accountIdOf, objectEvent } from './cache-support.js';
import { withoutCost } from '../support/answers.js';

const SECRET = 'whsec_cache_shared_by_both_instances';
const ONE = 'query ($id: ID!) { transaction(id: $id) { id status amountMoney { amount } customer { email } currency { iso } } }';

interface One {
  transaction: { id: string; status: string; amountMoney: { amount: string }; customer: { email: string } | null; currency: { iso: string } } | null;
}

describeWith('redis-server', 'entity cache shared by two instances through redis-server', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  let upstream: UpstreamClient;
  let a: RunningGateway;
  let b: RunningGateway;
  const key = newKey('shared-cache');
  let make: ReturnType<typeof factories>;
  let customer: RestObject;
  let final: RestObject;

  const calls = async (route?: string) => {
    const stats = (await emulatorAdmin(emulator.url)('GET', '/_emulator/stats')) as { total: number; routes: Record<string, number> };
    return route ? (stats.routes[route] ?? 0) : stats.total;
  };
  const read = (gateway: RunningGateway, id: number, k = key) =>
    fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${k}` },
      body: JSON.stringify({ query: ONE, variables: { id: String(id) } }),
    }).then((r) => r.json() as Promise<{ data?: One; errors?: unknown[] }>);

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      PAYMENTS_API_URL: emulator.url,
      LOG_LEVEL: 'silent',
      REDIS_URL: redis.url,
      WEBHOOK_SECRETS: SECRET,
    });
    upstream = createUpstreamClient({ baseUrl: emulator.url, resilience: config.upstreamResilience });
    const start = () => startGateway({ config, upstream, logger: createLogger('silent') });
    [a, b] = await Promise.all([start(), start()]);
    make = factories(emulator, key);
    customer = await make.customer();
    final = await make.transaction({ amount: 2500, customer: { id: customer.id } });
    await make.rest('PUT', `/v1/transactions/${final.id}`, { status: 'canceled' });
  }, 30_000);
  beforeEach(() => emulatorAdmin(emulator.url)('DELETE', '/_emulator/stats'));
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    upstream?.close();
    await emulator?.stop();
    await redis?.stop();
  });

  it('serves on one instance what the other cached, amounts exact', async () => {
    const first = await read(a, final.id);
    expect(first.data!.transaction).toMatchObject({ status: 'CANCELED', amountMoney: { amount: '2500' }, customer: { email: customer.email } });
    expect(await calls()).toBe(3);
    const onB = await read(b, final.id);
    expect(withoutCost(onB)).toEqual(withoutCost(first));
    expect(await calls()).toBe(3);
  });

  it('sees on the other instance the change a signed webhook announced to one', async () => {
    await read(b, final.id);
    const email = `renamed.${customer.id}@example.com`;
    const changed = (await make.rest('PUT', `/v1/customers/${customer.id}`, { email })) as Record<string, unknown>;
    // Until the webhook arrives, the cached copy is what both instances serve.
    expect((await read(b, final.id)).data!.transaction!.customer!.email).toBe(customer.email);
    const entity = (changed['v1/customer'] ?? changed) as RestObject;
    const webhook = await postWebhook(a.port, objectEvent('customer', await accountIdOf(make), entity), { secret: SECRET });
    expect(webhook.status).toBe(200);
    expect((await read(b, final.id)).data!.transaction!.customer!.email).toBe(email);
  });

  it('never serves a final transaction cached for one key to another key', async () => {
    await read(a, final.id);
    await emulatorAdmin(emulator.url)('DELETE', '/_emulator/stats');
    const other = await read(b, final.id, newKey('stranger'));
    expect(other.data!.transaction).toBeNull();
    expect(await calls('GET /v1/transactions/:id')).toBe(1);
  });

  it('reads the upstream for a transaction another instance or version cached before it was final', async () => {
    const snapshot = await make.transaction({ amount: 3300 });
    await make.rest('PUT', `/v1/transactions/${snapshot.id}`, { status: 'canceled' });
    // The entry as the store writes it, holding a pending snapshot this version would never have kept.
    const callerId = createHash('sha256').update(key).digest('hex').slice(0, 32);
    const writer = new Redis(redis.url);
    try {
      await writer.set(`payments-gateway:cache:v2:e:{transaction:${snapshot.id}}:${callerId}`, encode({ g: null, v: snapshot }), 'PX', 60_000);
    } finally {
      writer.disconnect();
    }
    const answer = await read(a, snapshot.id);
    expect(answer.data!.transaction).toMatchObject({ status: 'CANCELED', amountMoney: { amount: '3300' } });
    expect(await calls('GET /v1/transactions/:id')).toBe(1);
  });

  // Last: it stops the shared redis-server.
  it('answers from the upstream when Redis is gone, and refuses a webhook it cannot apply so it comes again', async () => {
    await read(a, final.id);
    await redis.stop();
    await emulatorAdmin(emulator.url)('DELETE', '/_emulator/stats');
    const answer = await read(a, final.id);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.transaction).toMatchObject({ status: 'CANCELED', amountMoney: { amount: '2500' } });
    expect(await calls('GET /v1/transactions/:id')).toBe(1);
    const webhook = await postWebhook(b.port, objectEvent('customer', await accountIdOf(make), customer), { secret: SECRET });
    expect(webhook.status).toBe(503);
  });
});
