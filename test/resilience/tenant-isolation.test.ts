/**
 * One tenant's upstream failures stay its own: a gateway over a fake upstream
 * that answers by the caller's Authorization header. A key whose reads the
 * upstream answers with 500 opens only its own breaker; another key's reads
 * keep going through. And the breaker keeps its purpose: when the upstream
 * fails for every key, the route's breaker opens and no key is sent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGatewayOver, type GatewayOnly } from '../support/harness.js';
import { startFakeUpstream, type FakeUpstream, type Reply } from '../upstream/fake-upstream.js';
import { aTransaction, enveloped } from '../upstream/fixtures.js';

const READ = 'query ($id: ID!) { transaction(id: $id) { id } }';
const ROUTE = 'GET /v1/transactions/:id';
const OK: Reply = { json: enveloped('transaction', aTransaction()) };
const FAIL: Reply = { status: 500, json: { message: 'internal error' } };

async function readyzBreakers(gateway: GatewayOnly): Promise<Record<string, string>> {
  const res = await fetch(new URL('/readyz', gateway.gateway.url));
  return ((await res.json()) as { breakers: Record<string, string> }).breakers;
}

describe('breakers per key', () => {
  let upstream: FakeUpstream;
  let gateway: GatewayOnly;
  let failing: (key: string) => boolean;
  const keyA = 'sk_sandbox_tenant_a_500s';
  const keyB = 'sk_sandbox_tenant_b_fine';

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.replyWith((req) => (failing(String(req.headers.authorization).replace(/^Bearer /, '')) ? FAIL : OK));
    // Default breaker and budget settings; every read reaches the upstream, and no rate limit gets in the way.
    gateway = await startGatewayOver(upstream.url, { ENTITY_CACHE: 'false', RATE_LIMIT_PER_MINUTE: '0', UPSTREAM_RETRY_BASE_MS: '1', UPSTREAM_RETRY_MAX_DELAY_MS: '5' });
  });
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.requests.splice(0);
  });

  const sentBy = (key: string) => upstream.requests.filter((r) => r.headers.authorization === `Bearer ${key}`).length;
  const read = (key: string) => gateway.gql<{ transaction: { id: string } | null }>(READ, { id: '101' }, key);
  const codeOf = (answer: Awaited<ReturnType<typeof read>>) => answer.errors?.[0]?.extensions?.reason ?? answer.errors?.[0]?.extensions?.code;

  it("one key's 500s open its own breaker, and another key's reads all go through", async () => {
    failing = (key) => key === keyA;

    // The attack: 25 reads at once with the key the upstream fails.
    const attack = await Promise.all(Array.from({ length: 25 }, () => read(keyA)));
    expect(attack.every((a) => a.data?.transaction == null && a.errors !== undefined)).toBe(true);
    const sentForA = sentBy(keyA);

    const answersB = [];
    for (let i = 0; i < 20; i++) answersB.push(await read(keyB));
    const laterA = await read(keyA);

    expect(answersB.filter((a) => a.errors === undefined && a.data?.transaction?.id === '101')).toHaveLength(20);
    expect(sentBy(keyB)).toBe(20);
    // A's own breaker is open: its read fails fast, unsent.
    expect(codeOf(laterA)).toBe('circuit_open');
    expect(sentBy(keyA)).toBe(sentForA);
    expect((await readyzBreakers(gateway))[ROUTE]).toBe('closed');
  });

  it('an upstream failing for every key opens the route: no key is sent, a fresh one neither', async () => {
    failing = () => true;
    const keys = ['sk_sandbox_down_1', 'sk_sandbox_down_2', 'sk_sandbox_down_3', 'sk_sandbox_down_4'];
    for (let round = 0; round < 8; round++) await Promise.all(keys.map((key) => read(key)));
    const sent = upstream.requests.length;

    const afterwards = await Promise.all([...keys, 'sk_sandbox_down_fresh'].map((key) => read(key)));

    expect(afterwards.map(codeOf)).toEqual(Array(5).fill('circuit_open'));
    expect(upstream.requests.length).toBe(sent);
    // Opened by the route's breaker, well before each key's own would have: under 20 reads each.
    expect(sent).toBeLessThan(keys.length * 20);
    expect((await readyzBreakers(gateway))[ROUTE]).toBe('open');
  });
});
