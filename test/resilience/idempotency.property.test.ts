/**
 * Property: whatever the interleaving of concurrent duplicates, client
 * retries, gateway retries and upstream faults, each idempotency key of
 * `createPayout` and `startPayouts` causes exactly one upstream side effect,
 * every duplicate gets the same answer, and a changed input gets
 * IDEMPOTENCY_KEY_REUSED. Once on one instance (records in memory), once on
 * two instances sharing Redis, with requests spread over both.
 *
 * Interleavings come from real concurrency with generated start delays and
 * generated faults (5xx, resets, and slow answers that time out after the
 * upstream acted); the emulator counts every request that reached it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { describeWith } from '../support/tools.js';
import { startCluster, type Cluster } from './cluster.js';
import { withoutCost } from '../support/answers.js';
import { CREATE_PAYOUT, START_PAYOUTS, codes, payoutInput, payoutsWithReference, post, type Answer } from './support.js';

const ENV = {
  UPSTREAM_TIMEOUT_MS: '200',
  OPERATION_DEADLINE_MS: '4000',
  UPSTREAM_RETRY_BASE_MS: '10',
  // Not under test here: the breaker must not open across runs.
  BREAKER_VOLUME_THRESHOLD: '1000000',
};
const ROUTES = { create: 'POST /v1/payouts', start: 'PUT /v1/payouts/start' } as const;
const RETRYABLE = new Set(['UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'IDEMPOTENCY_IN_PROGRESS']);

type Kind = keyof typeof ROUTES;
interface Request {
  key: number;
  /** 0 = the usual input, 1 = a changed one. */
  variant: 0 | 1;
  instance: number;
  delayMs: number;
}
interface Fault {
  kind: Kind;
  fault: { status: number } | { reset: true } | { latencyMs: number };
  times: number;
}
interface Scenario {
  kinds: Kind[];
  requests: Request[];
  faults: Fault[];
}

const scenario = (instances: number): fc.Arbitrary<Scenario> =>
  fc.array(fc.constantFrom<Kind>('create', 'start'), { minLength: 1, maxLength: 3 }).chain((kinds) =>
    fc.record({
      kinds: fc.constant(kinds),
      requests: fc.array(
        fc.record({
          key: fc.nat({ max: kinds.length - 1 }),
          variant: fc.constantFrom<0 | 1>(0, 0, 0, 1),
          instance: fc.nat({ max: instances - 1 }),
          delayMs: fc.nat({ max: 40 }),
        }),
        { minLength: 2, maxLength: 8 },
      ),
      faults: fc.array(
        fc.record({
          kind: fc.constantFrom<Kind>('create', 'start'),
          fault: fc.constantFrom<Fault['fault']>({ status: 500 }, { status: 503 }, { reset: true }, { latencyMs: 300 }),
          times: fc.integer({ min: 1, max: 2 }),
        }),
        { maxLength: 3 },
      ),
    }),
  );

async function send(url: string, kind: Kind, apiKey: string, key: string, variant: 0 | 1, payoutId: number | undefined, ref: string): Promise<Answer> {
  if (kind === 'create') return post(url, CREATE_PAYOUT, { input: payoutInput(variant === 0 ? 700 : 900, ref), key }, apiKey);
  const item = variant === 0 ? { id: String(payoutId) } : { id: String(payoutId), scheduledAt: '2099-01-01T00:00:00Z' };
  return post(url, START_PAYOUTS, { payouts: [item], key }, apiKey);
}

/** A client that retries system failures with the same key, as a careful client would. */
async function sendWithRetries(...args: Parameters<typeof send>): Promise<Answer> {
  let answer = await send(...args);
  for (let i = 0; i < 4 && codes(answer).some((c) => RETRYABLE.has(c)); i++) {
    await new Promise((r) => setTimeout(r, 50));
    answer = await send(...args);
  }
  return answer;
}

async function checkScenario(cluster: Cluster, s: Scenario): Promise<void> {
  const apiKey = newKey('prop');
  await cluster.admin('DELETE', '/_emulator/faults'); // a previous run may leave some unconsumed
  const make = factories(cluster.emulator, apiKey);
  const payoutIds = await Promise.all(
    s.kinds.map(async (kind) =>
      kind === 'start' ? (await make.payout({ customer: { firstname: 'Ama', lastname: 'K', email: 'ama@example.com', phone_number: { number: '64000001', country: 'bj' } } })).id : undefined,
    ),
  );
  await cluster.admin('DELETE', '/_emulator/stats');
  const injected: Record<Kind, number> = { create: 0, start: 0 };
  for (const f of s.faults) {
    await cluster.admin('POST', '/_emulator/faults', { route: ROUTES[f.kind], ...f.fault, times: f.times });
    injected[f.kind] += f.times;
  }
  const hitsBefore = { create: 0, start: 0 };

  const answers = await Promise.all(
    s.requests.map(async (r) => {
      await new Promise((done) => setTimeout(done, r.delayMs));
      const kind = s.kinds[r.key]!;
      const answer = await sendWithRetries(cluster.urls[r.instance]!, kind, apiKey, `key-${r.key}`, r.variant, payoutIds[r.key], `ref-${r.key}`);
      return { ...r, kind, answer };
    }),
  );
  // Slow faults let the upstream act after the gateway gave up: wait for those to land too.
  await new Promise((r) => setTimeout(r, 350));

  // Fault hits per route: remaining faults are listed per route, so count them per kind.
  const listed = (await cluster.admin('GET', '/_emulator/faults')) as { faults: { route: string; remaining: number | null }[] };
  for (const kind of ['create', 'start'] as const) {
    const remaining = listed.faults.filter((f) => f.route === ROUTES[kind]).reduce((n, f) => n + (f.remaining ?? 0), 0);
    hitsBefore[kind] = injected[kind] - remaining;
  }
  const stats = (await cluster.admin('GET', '/_emulator/stats')) as { routes: Record<string, number> };

  const succeeded: Record<Kind, number> = { create: 0, start: 0 };
  for (let k = 0; k < s.kinds.length; k++) {
    const mine = answers.filter((a) => a.key === k);
    if (mine.length === 0) continue;
    const ok = mine.filter((a) => a.answer.errors === undefined);
    const winners = new Set(ok.map((a) => a.variant));
    // One input owns the key: it always gets its answer, the other input is refused.
    expect(winners.size).toBe(1);
    const [winner] = [...winners];
    for (const a of mine) {
      if (a.variant === winner) expect(withoutCost(a.answer)).toEqual(withoutCost(ok[0]!.answer));
      else expect(codes(a.answer)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    }
    expect(JSON.stringify(ok[0]!.answer.data)).not.toMatch(/"userErrors":\[\{/);
    succeeded[s.kinds[k]!] += 1;
    if (s.kinds[k] === 'create') expect(await payoutsWithReference(cluster, apiKey, `ref-${k}`)).toBe(1);
  }
  // Exactly one clean upstream request per key: every other request reaching the upstream was an injected fault.
  for (const kind of ['create', 'start'] as const) {
    expect((stats.routes[ROUTES[kind]] ?? 0) - hitsBefore[kind]).toBe(succeeded[kind]);
  }
}

describe('idempotency under random interleavings, one instance', () => {
  let single: Cluster;
  beforeAll(async () => {
    single = await startCluster({ instances: 1, env: ENV });
  });
  afterAll(async () => {
    await single?.stop();
  });

  it('one instance, records in memory: one side effect per key, identical answers, changed input refused', async () => {
    await fc.assert(fc.asyncProperty(scenario(1), (s) => checkScenario(single, s)), { numRuns: 12 });
  }, 120_000);
});

describeWith('redis-server', 'idempotency under random interleavings, two instances over Redis', () => {
  let redis: RedisServer;
  let pair: Cluster;
  beforeAll(async () => {
    redis = await startRedisServer();
    pair = await startCluster({ instances: 2, redisUrl: redis.url, env: ENV });
  });
  afterAll(async () => {
    await pair?.stop();
    await redis?.stop();
  });

  it('two instances sharing Redis: the same, with duplicates spread over both', async () => {
    await fc.assert(fc.asyncProperty(scenario(2), (s) => checkScenario(pair, s)), { numRuns: 12 });
  }, 120_000);
});
