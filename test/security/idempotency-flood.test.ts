/**
 * Idempotency records cannot be flooded: refused input takes no record, and a
 * flood of valid keys evicts only the flooder's own records, so another
 * caller's retry still replays instead of acting twice upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { loadConfig } from '../../src/config.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { MemoryIdempotencyStore } from '../../src/idempotency/index.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { emulatorAdmin, newKey } from '../support/harness.js';

/** An emulator and a gateway over `store`, for the tests of one describe block. */
function gatewayOver(store: MemoryIdempotencyStore): { emulator: () => RunningEmulator; gateway: () => RunningGateway } {
  let emulator: RunningEmulator;
  let upstream: UpstreamClient;
  let gateway: RunningGateway;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' });
    upstream = createUpstreamClient({ baseUrl: emulator.url, resilience: config.upstreamResilience });
    gateway = await startGateway({ config, upstream, logger: createLogger('silent'), idempotencyStore: store });
  });
  afterAll(async () => {
    await gateway?.stop();
    upstream?.close();
    await emulator?.stop();
  });
  return { emulator: () => emulator, gateway: () => gateway };
}

describe('idempotency under a flood', () => {
  // Small bounds so the flood reaches them: 5 records per caller.
  const store = new MemoryIdempotencyStore(1_000, 5);
  const stack = gatewayOver(store);

  const post = async (key: string, query: string) => {
    const res = await fetch(stack.gateway().url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    });
    return (await res.json()) as { data?: Record<string, { customer?: { id: string } | null; userErrors?: { code: string }[] }>; errors?: unknown[] };
  };
  const createCustomer = (alias: string, idempotencyKey: string, email: string) =>
    `${alias}: createCustomer(idempotencyKey: "${idempotencyKey}", input: { firstname: "Ada", lastname: "L", email: "${email}" }) { customer { id } userErrors { code } }`;
  const createCalls = async () => ((await emulatorAdmin(stack.emulator().url)('GET', '/_emulator/stats')) as { routes: Record<string, number> }).routes['POST /v1/customers'] ?? 0;

  it('aliased keyed mutations refused by local validation store nothing', async () => {
    const key = newKey('refused');
    const before = store.size;
    const fields = Array.from({ length: 10 }, (_, i) =>
      `m${i}: createTransaction(idempotencyKey: "bad-${i}", input: { amountDecimal: "-5", description: "x", currency: { iso: "XOF" } }) { userErrors { code } }`,
    );
    const res = await post(key, `mutation { ${fields.join(' ')} }`);
    expect(res.errors).toBeUndefined();
    expect(Object.values(res.data!).every((p) => p.userErrors?.[0]?.code === 'INVALID')).toBe(true);
    expect(store.size).toBe(before);
  });

  it('a flood of valid keys by one caller does not evict another caller\'s record: its retry acts once', async () => {
    const victim = newKey('victim');
    const flooder = newKey('flooder');
    const first = await post(victim, `mutation { ${createCustomer('c', 'victim-key', 'victim@example.com')} }`);
    const victimId = first.data!.c!.customer!.id;
    for (let round = 0; round < 4; round++) {
      const fields = Array.from({ length: 10 }, (_, i) => createCustomer(`f${i}`, `flood-${round}-${i}`, `f${round}${i}@example.com`));
      expect((await post(flooder, `mutation { ${fields.join(' ')} }`)).errors).toBeUndefined();
    }
    const calls = await createCalls();
    const retry = await post(victim, `mutation { ${createCustomer('c', 'victim-key', 'victim@example.com')} }`);
    expect(retry.data!.c!.customer!.id).toBe(victimId);
    expect(await createCalls()).toBe(calls);
  });
});

describe('idempotency records of keys the upstream refuses', () => {
  // Room for three records in all, so three refused keys would fill it if their records stayed.
  const stack = gatewayOver(new MemoryIdempotencyStore(3, 1_000));

  const createCustomer = async (key: string, idempotencyKey: string) => {
    const res = await fetch(stack.gateway().url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({
        query: `mutation { createCustomer(idempotencyKey: "${idempotencyKey}", input: { firstname: "Ada", lastname: "L", email: "${idempotencyKey}@example.com" }) { customer { id } } }`,
      }),
    });
    return (await res.json()) as { data?: { createCustomer: { customer: { id: string } | null } | null }; errors?: { extensions?: { code?: string } }[] };
  };

  it('a write refused with 401 leaves no record behind: a flood of refused keys cannot lock others out', async () => {
    await emulatorAdmin(stack.emulator().url)('POST', '/_emulator/faults', { route: 'POST /v1/customers', status: 401, times: 3 });
    for (let i = 0; i < 3; i++) {
      const refused = await createCustomer(newKey(`refused-${i}`), `refused-${i}`);
      expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    const honest = await createCustomer(newKey('honest'), 'honest-1');
    expect(honest.errors).toBeUndefined();
    expect(honest.data!.createCustomer!.customer!.id).toBeTruthy();
  });
});
