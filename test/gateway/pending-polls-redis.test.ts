/**
 * Pending payments polled through two gateway instances over one redis-server: what one instance kept
 * the other serves, an approval announced by webhook to one is in the first poll on either after the
 * acknowledgement, and with Redis gone every poll reads the upstream again.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, upstreamFor, type RunningGateway } from '../../src/server/index.js';
import type { UpstreamClient } from '../../src/upstream/index.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { emulatorAdmin, newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { pollers, readStatus } from '../support/polling.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { eventually, postWebhook, setUpstreamStatus, transactionEvent } from '../realtime/support.js';
import { accountIdOf } from './cache-support.js';

const SECRET = 'whsec_pending_polls_two_instances';
const ROUTE = 'GET /v1/transactions/:id';

describeWith('redis-server', 'pending payments polled through two instances over redis-server', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  const upstreams: UpstreamClient[] = [];
  let a: RunningGateway;
  let b: RunningGateway;
  const key = newKey('polls-shared');
  let make: ReturnType<typeof factories>;
  let accountId: number;

  const reads = async () => {
    const stats = (await emulatorAdmin(emulator.url)('GET', '/_emulator/stats')) as { routes: Record<string, number> };
    return stats.routes[ROUTE] ?? 0;
  };
  const resetCounts = () => emulatorAdmin(emulator.url)('DELETE', '/_emulator/stats');

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
      // Long enough that only an eviction shows a change here; no background re-reads, so reads are counted exactly.
      PENDING_OBJECT_MAX_AGE_MS: '60000',
      RECONCILE_READS_PER_SECOND: '0',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    const start = () => {
      const upstream = upstreamFor(config, emulator.url);
      upstreams.push(upstream);
      return startGateway({ config, upstream, logger: createLogger('silent') });
    };
    [a, b] = await Promise.all([start(), start()]);
    make = factories(emulator, key);
    accountId = await accountIdOf(make);
    // Proven on both: a key not proven lately is served nothing kept.
    const other = await make.transaction({ amount: 1 });
    await Promise.all([readStatus(a.url, key, other.id), readStatus(b.url, key, other.id)]);
  }, 30_000);
  beforeEach(() => resetCounts());
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const upstream of upstreams) upstream.close();
    await emulator?.stop();
    await redis?.stop();
  });

  it('serves on one instance the pending payment the other kept', async () => {
    const pending = await make.transaction({ amount: 601 });
    await resetCounts();
    expect((await readStatus(a.url, key, pending.id)).status).toBe('PENDING');
    expect((await readStatus(b.url, key, pending.id)).status).toBe('PENDING');
    expect(await reads()).toBe(1);
  });

  it('shows an approval announced by webhook to one instance in every poll on either that starts after the acknowledgement', async () => {
    const pending = await make.transaction({ amount: 602 });
    const late: string[] = [];
    let ackedAt = Number.POSITIVE_INFINITY;
    const run = pollers({
      url: [a.url, b.url],
      key,
      id: pending.id,
      count: 20,
      intervalMs: 50,
      durationMs: 2_000,
      onAnswer: (status, startedAt) => {
        if (startedAt > ackedAt && status !== 'APPROVED') late.push(String(status));
      },
    });
    await new Promise((r) => setTimeout(r, 600));
    await setUpstreamStatus(emulator.url, 'transactions', pending.id, 'approved');
    // Kept on both until the webhook: the change is not known yet.
    expect((await readStatus(b.url, key, pending.id)).status).toBe('PENDING');
    const webhook = await postWebhook(a.port, transactionEvent({ accountId, transaction: { ...pending, status: 'approved', updated_at: new Date().toISOString() } }), { secret: SECRET });
    ackedAt = Date.now();
    expect(webhook.status).toBe(200);
    expect((await readStatus(b.url, key, pending.id)).status).toBe('APPROVED');
    const done = await run;
    expect(done.errors).toEqual([]);
    expect(late).toEqual([]);
  });

  // Last: it stops the shared redis-server.
  it('reads a pending payment upstream on every poll once Redis is gone', async () => {
    const pending = await make.transaction({ amount: 603 });
    await readStatus(a.url, key, pending.id);
    await redis.stop();
    await eventually(() => fetch(a.url.replace(/\/graphql$/, '/readyz')).then((r) => r.json() as Promise<{ degraded?: string[] }>), (r) => r.degraded?.includes('redis') === true, 5_000);
    await resetCounts();
    for (let i = 0; i < 5; i++) expect((await readStatus(a.url, key, pending.id)).status).toBe('PENDING');
    const together = await Promise.all(Array.from({ length: 5 }, () => readStatus(b.url, key, pending.id)));
    expect(together.map((t) => t.status)).toEqual(Array.from({ length: 5 }, () => 'PENDING'));
    expect(await reads()).toBe(10);
  });
});
