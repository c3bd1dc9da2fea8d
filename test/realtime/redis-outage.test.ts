/**
 * The shared redis-server dies under two gateway processes and comes back on
 * the same port: each instance says so in /readyz (still ready, degraded),
 * in `gateway_redis_up`, and in one error line; a webhook taken meanwhile is
 * refused 503 (so the upstream redelivers it) and, redelivered after Redis
 * returns, reaches a subscriber on the other instance.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startInstances, type GatewayInstance } from './processes.js';
import { disposeLive, eventually, postWebhook, sleep, subscribeLive, transactionEvent, wsClient } from './support.js';

const SECRET = 'whsec_shared_by_both_instances';
const ROLES = ['bus-publisher', 'bus-subscriber', 'entity-cache', 'idempotency', 'key-news', 'limits'];
const TRANSACTION_UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status } }`;

type Instance = GatewayInstance;

interface Ready {
  status: string;
  redis?: Record<string, string>;
  degraded?: string[];
}

const readyz = async (i: Instance) => {
  const res = await fetch(`http://127.0.0.1:${i.port}/readyz`);
  return { httpStatus: res.status, body: (await res.json()) as Ready };
};

/** `gateway_redis_up` per role, from the instance's /metrics. */
async function redisGauge(i: Instance): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${i.port}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^gateway_redis_up\{role="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** The instance's JSON log lines with this message prefix. */
const logLines = (i: Instance, prefix: string) =>
  i.process
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; redis?: string; roles?: string[] })
    .filter((line) => line.msg.startsWith(prefix));

const allAre = (value: number | string) => (state: Record<string, unknown>) => ROLES.every((role) => state[role] === value) && Object.keys(state).length === ROLES.length;

describeWith('redis-server', 'the shared redis-server lost and restarted under two gateway processes', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  let a: Instance;
  let b: Instance;

  // Back from its append-only file, as deployed: an empty Redis is another fault (test/resilience/redis-data-loss.test.ts).
  const dir = mkdtempSync(path.join(tmpdir(), 'outage-aof-'));
  const persistent = ['--appendonly', 'yes', '--dir', dir];
  beforeAll(async () => {
    redis = await startRedisServer(persistent);
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    // Reconciliation off: what a subscriber sees comes from webhooks and the shared bus alone.
    const env = { REDIS_URL: redis.url, PAYMENTS_API_URL: emulator.url, WEBHOOK_SECRETS: SECRET, LOG_LEVEL: 'info', RECONCILE_READS_PER_SECOND: '0' };
    [a, b] = (await startInstances(env)) as [Instance, Instance];
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.process.stop(), b?.process.stop()]);
    await emulator?.stop();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports Redis down within seconds on both instances, stays ready, logs one error line, and recovers when it returns', async () => {
    for (const i of [a, b]) {
      expect((await eventually(() => readyz(i), (r) => allAre('up')(r.body.redis ?? {}), 5000)).body).not.toHaveProperty('degraded');
      expect(await redisGauge(i)).toEqual(Object.fromEntries(ROLES.map((r) => [r, 1])));
    }
    const key = newKey('outage');
    const f = factories(emulator, key);
    const transaction = await f.transaction();
    const accounts = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
    const accountId = (accounts['v1/accounts'] ?? (accounts as unknown as { id: number }[]))[0]!.id;
    const wsUrl = `ws://127.0.0.1:${a.port}/graphql`;
    const { client, connected } = wsClient(wsUrl, key);
    await connected;
    const sub = await subscribeLive<{ transactionUpdated: { status: string } }>(wsUrl, client, TRANSACTION_UPDATED, { id: String(transaction.id) });
    expect((await sub.nth(1)).transactionUpdated.status).toBe('PENDING');

    const lostAt = Date.now();
    await redis.kill();
    for (const i of [a, b]) {
      const down = await eventually(() => readyz(i), (r) => allAre('down')(r.body.redis ?? {}), 5000);
      // Every instance shares this Redis: leaving the pool would take them all out at once.
      expect(down).toEqual({ httpStatus: 200, body: { status: 'ready', breakers: expect.any(Object), redis: expect.any(Object), degraded: ['redis'], idempotency: { losses: 0, state: 'ok' } } });
      expect(await redisGauge(i)).toEqual(Object.fromEntries(ROLES.map((r) => [r, 0])));
    }
    expect(Date.now() - lostAt).toBeLessThan(5000);

    // The payment approved through B while Redis is away: refused, so the upstream sends it again later.
    const approved = transactionEvent({ accountId, transaction: { ...transaction, status: 'approved', updated_at: new Date().toISOString() } });
    expect((await postWebhook(b.port, approved, { secret: SECRET })).status).toBe(503);

    // Several reconnect attempts later, still one line each.
    await sleep(1500);
    for (const i of [a, b]) {
      const lost = logLines(i, 'redis unreachable');
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ level: 50, redis: 'down' });
      expect(lost[0]!.msg).toContain('events from other instances not received');
      expect(logLines(i, 'redis connection error')).toEqual([]);
      expect(logLines(i, 'redis reachable again')).toEqual([]);
    }

    redis = await startRedisServer(persistent, redis.port);
    for (const i of [a, b]) {
      expect((await eventually(() => readyz(i), (r) => allAre('up')(r.body.redis ?? {}), 10_000)).body).not.toHaveProperty('degraded');
      expect(await redisGauge(i)).toEqual(Object.fromEntries(ROLES.map((r) => [r, 1])));
      // The line went to the pipe before /readyz answered, but the two reach this process in either order.
      expect(await eventually(async () => logLines(i, 'redis reachable again'), (lines) => lines.length > 0, 2000)).toMatchObject([{ level: 30, redis: 'up' }]);
      expect(logLines(i, 'redis unreachable')).toHaveLength(1);
    }

    // Redelivered after Redis is back: taken by B, delivered to the subscriber on A.
    await eventually(() => postWebhook(b.port, approved, { secret: SECRET }), (r) => r.status === 200, 5000);
    expect((await sub.nth(2)).transactionUpdated.status).toBe('APPROVED');
    await disposeLive(wsUrl, client);
  }, 40_000);
});
