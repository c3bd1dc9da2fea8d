/**
 * Idempotency records cannot be flooded into forgetting: refused input takes
 * no record, and a flood of valid keys, by one caller or by many, drops no
 * record of anyone's: a full store refuses new claims instead, so another
 * caller's retry replays or is refused, and never acts twice upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { loadConfig } from '../../src/config.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { MemoryIdempotencyStore } from '../../src/idempotency/index.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { emulatorAdmin, newKey } from '../support/harness.js';
import { startKeyStrippingUpstream, type KeyStrippingUpstream } from '../support/key-stripping-upstream.js';

/** An emulator (behind a proxy that drops `Idempotency-Key`) and a gateway over `store`, for one describe block. */
function gatewayOver(store: MemoryIdempotencyStore): { emulator: () => RunningEmulator; gateway: () => RunningGateway } {
  let emulator: RunningEmulator;
  let stripping: KeyStrippingUpstream;
  let upstream: UpstreamClient;
  let gateway: RunningGateway;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    stripping = await startKeyStrippingUpstream(emulator.url);
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: stripping.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' });
    upstream = createUpstreamClient({ baseUrl: stripping.url, resilience: config.upstreamResilience });
    gateway = await startGateway({ config, upstream, logger: createLogger('silent'), idempotencyStore: store });
  });
  afterAll(async () => {
    await gateway?.stop();
    upstream?.close();
    await stripping?.close();
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

  it('a flood of valid keys by one caller past its quota is refused, and drops no record: another caller\'s retry acts once', async () => {
    const victim = newKey('victim');
    const flooder = newKey('flooder');
    const first = await post(victim, `mutation { ${createCustomer('c', 'victim-key', 'victim@example.com')} }`);
    const victimId = first.data!.c!.customer!.id;
    const refused: string[] = [];
    for (let round = 0; round < 4; round++) {
      const fields = Array.from({ length: 10 }, (_, i) => createCustomer(`f${i}`, `flood-${round}-${i}`, `f${round}${i}@example.com`));
      const res = await post(flooder, `mutation { ${fields.join(' ')} }`);
      refused.push(...((res.errors ?? []) as { extensions?: { code?: string } }[]).map((e) => String(e.extensions?.code)));
    }
    // Five records per caller: each later round's first claim is refused, which ends its operation (fields run in order).
    expect(refused).toEqual(Array.from({ length: 4 }, () => 'IDEMPOTENCY_UNAVAILABLE'));
    expect(store.size).toBe(6);
    const calls = await createCalls();
    const retry = await post(victim, `mutation { ${createCustomer('c', 'victim-key', 'victim@example.com')} }`);
    expect(retry.data!.c!.customer!.id).toBe(victimId);
    expect(await createCalls()).toBe(calls);
  });
});

describe('idempotency under a flood by many keys', () => {
  // Room for 40 records in all, 12 per caller: the bystander (the heaviest caller) and attackers fill it.
  const store = new MemoryIdempotencyStore(40, 12);
  const stack = gatewayOver(store);

  const create = async (apiKey: string, idempotencyKey: string) => {
    const res = await fetch(stack.gateway().url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({
        query: `mutation ($k: String!, $e: EmailAddress!) { createCustomer(idempotencyKey: $k, input: { firstname: "Ada", lastname: "L", email: $e }) { customer { id } } }`,
        variables: { k: idempotencyKey, e: `${idempotencyKey}@example.com` },
      }),
    });
    return (await res.json()) as { data?: { createCustomer: { customer: { id: string } | null } | null }; errors?: { extensions?: { code?: string } }[] };
  };
  /** Customers the emulator created for `apiKey`: every write through the stripping proxy acts. */
  const created = async (apiKey: string) => {
    const res = await fetch(`${stack.emulator().url}/v1/customers?per_page=100`, { headers: { authorization: `Bearer ${apiKey}` } });
    return ((await res.json()) as { 'v1/customers': { email: string }[] })['v1/customers'].map((c) => c.email);
  };

  it('a bystander\'s retries all replay or are refused, none acts again, while attackers\' keys fill the store', async () => {
    const bystander = newKey('bystander');
    const first = new Map<string, string>();
    for (let i = 0; i < 10; i++) {
      const res = await create(bystander, `pay-${i}`);
      if (!res.data) throw new Error(JSON.stringify(res));
      first.set(`pay-${i}`, res.data!.createCustomer!.customer!.id);
    }
    // Thirty attackers, each with a few light records: the store is full after them.
    const attackers = Array.from({ length: 30 }, (_, i) => newKey(`attacker-${i}`));
    const attackerCodes: string[] = [];
    for (const attacker of attackers) {
      for (let k = 0; k < 2; k++) {
        const res = await create(attacker, `a-${k}`);
        if (res.errors) attackerCodes.push(...res.errors.map((e) => String(e.extensions?.code)));
      }
    }

    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 10; i++) {
        const res = await create(bystander, `pay-${i}`);
        const id = res.data?.createCustomer?.customer?.id;
        if (id !== undefined) outcomes.push(id === first.get(`pay-${i}`) ? 'replayed' : 'acted again');
        else outcomes.push(String(res.errors?.[0]?.extensions?.code));
      }
    }
    // A new payment of the bystander is refused while the store is full: retry later, nothing sent.
    const fresh = await create(bystander, 'pay-new');

    expect(outcomes.filter((o) => o !== 'replayed' && o !== 'IDEMPOTENCY_UNAVAILABLE')).toEqual([]);
    expect(outcomes).toHaveLength(60);
    expect(fresh.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_UNAVAILABLE');
    const emails = await created(bystander);
    expect(emails.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `pay-${i}@example.com`).sort());
    // The attackers were refused too, once the store was full.
    expect(attackerCodes.length).toBeGreaterThan(0);
    expect(new Set(attackerCodes)).toEqual(new Set(['IDEMPOTENCY_UNAVAILABLE']));
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
