/**
 * A gateway process sharing its idempotency records through a real redis-server, in front of a payments API that
 * ignores `Idempotency-Key`: the redis-server is killed and a new one, without its data, takes its port. Within
 * seconds the gateway logs one error line, shows the quarantine in /readyz and a metric, and refuses keyed
 * mutations for IDEMPOTENCY_QUARANTINE_MS: the retries of payments whose records were lost are not created twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { newKey } from '../support/harness.js';
import { startKeyStrippingUpstream, type KeyStrippingUpstream } from '../support/key-stripping-upstream.js';
import { describeWith } from '../support/tools.js';
import { gatewayReady, spawnMain, type GatewayProcess } from '../realtime/processes.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';

const QUARANTINE_MS = 6_000;
const CREATE = `mutation ($k: String!, $e: EmailAddress!) { createCustomer(idempotencyKey: $k, input: { firstname: "Ada", lastname: "L", email: $e }) { customer { id } } }`;

describeWith('redis-server', 'a Redis that comes back empty', () => {
  let emulator: RunningEmulator;
  let stripping: KeyStrippingUpstream;
  let redis: RedisServer;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    stripping = await startKeyStrippingUpstream(emulator.url);
    redis = await startRedisServer();
    gateway = await spawnMain({ PAYMENTS_API_URL: stripping.url, REDIS_URL: redis.url, LOG_LEVEL: 'info', IDEMPOTENCY_QUARANTINE_MS: String(QUARANTINE_MS) }, gatewayReady);
  });
  afterAll(async () => {
    await gateway?.stop();
    await redis?.stop();
    await stripping?.close();
    await emulator?.stop();
  });

  const create = async (apiKey: string, key: string) => {
    const res = await fetch(gateway.found.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: CREATE, variables: { k: key, e: `${key}@example.com` } }),
    });
    return (await res.json()) as { data?: { createCustomer: { customer: { id: string } | null } | null }; errors?: { extensions?: { code?: string } }[] };
  };
  const customers = async (apiKey: string) => {
    const res = await fetch(`${emulator.url}/v1/customers?per_page=100`, { headers: { authorization: `Bearer ${apiKey}` } });
    return ((await res.json()) as { 'v1/customers': { email: string }[] })['v1/customers'].map((c) => c.email).sort();
  };
  type Ready = { idempotency?: { state: string; reason?: string }; degraded?: string[] };
  const readyz = async (): Promise<Ready> => (await (await fetch(new URL('/readyz', gateway.found.url))).json()) as Ready;
  const metric = async (name: string) => new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(new URL('/metrics', gateway.found.url))).text())?.[1];
  const lossLines = () => gateway.output().split('\n').filter((l) => l.includes('idempotency Redis lost records'));

  it('is found within seconds, told once, and keyed mutations are refused for the quarantine: none created twice', async () => {
    const apiKey = newKey('loss');
    const keys = Array.from({ length: 5 }, (_, i) => `pay-${i}`);
    for (const key of keys) expect((await create(apiKey, key)).errors).toBeUndefined();
    expect((await readyz()).idempotency).toEqual({ state: 'ok', losses: 0 });
    expect(await metric('gateway_idempotency_quarantined')).toBe('0');

    const port = redis.port;
    await redis.kill();
    redis = await startRedisServer([], port);
    const lostAt = Date.now();
    let state = await readyz();
    while (state.idempotency?.state !== 'quarantined' && Date.now() - lostAt < 10_000) {
      await new Promise((r) => setTimeout(r, 50));
      state = await readyz();
    }
    const foundMs = Date.now() - lostAt;

    expect(state.idempotency).toMatchObject({ state: 'quarantined', reason: expect.stringMatching(/marker is gone: it came back empty/) });
    expect(state.degraded).toContain('idempotency');
    expect(foundMs).toBeLessThan(5_000);
    expect(await metric('gateway_idempotency_quarantined')).toBe('1');
    expect(await metric('gateway_idempotency_records_lost')).toBe('1');
    // Every retry of a payment whose record is gone, and a new payment, are refused: nothing sent.
    for (let round = 0; round < 3; round++) {
      for (const key of keys) expect((await create(apiKey, key)).errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_UNAVAILABLE');
    }
    expect((await create(apiKey, 'new-during')).errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_UNAVAILABLE');
    expect(await customers(apiKey)).toEqual(keys.map((k) => `${k}@example.com`).sort());
    expect(lossLines()).toHaveLength(1);
    expect(JSON.parse(lossLines()[0]!)).toMatchObject({ level: 50, quarantineMs: QUARANTINE_MS });

    // Past the quarantine, keyed mutations are taken again.
    while ((await readyz()).idempotency?.state === 'quarantined' && Date.now() - lostAt < QUARANTINE_MS + 10_000) await new Promise((r) => setTimeout(r, 100));
    expect((await readyz()).idempotency).toEqual({ state: 'ok', losses: 1 });
    expect((await create(apiKey, 'new-after')).errors).toBeUndefined();
    expect(lossLines()).toHaveLength(1);
  }, 60_000);
});
