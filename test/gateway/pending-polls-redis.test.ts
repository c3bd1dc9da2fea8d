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
import { newKey } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { readStatus } from '../support/polling.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { eventually } from '../realtime/support.js';
import { accountIdOf } from './cache-support.js';
import { approvalUnderPollers, pollsOneByOneThenTogether, proveKey, resetRouteReads, routeReads } from './pending-polls-support.js';

const SECRET = 'whsec_pending_polls_two_instances';

describeWith('redis-server', 'pending payments polled through two instances over redis-server', () => {
  let redis: RedisServer;
  let emulator: RunningEmulator;
  const upstreams: UpstreamClient[] = [];
  let a: RunningGateway;
  let b: RunningGateway;
  const key = newKey('polls-shared');
  let make: ReturnType<typeof factories>;
  let accountId: number;

  const reads = () => routeReads(emulator.url);
  const resetCounts = () => resetRouteReads(emulator.url);

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
    await proveKey([a.url, b.url], key, make);
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
    const run = await approvalUnderPollers({ pollUrls: [a.url, b.url], checkUrl: b.url, webhookPort: a.port, emulatorUrl: emulator.url, secret: SECRET, key, accountId, pending });
    // Kept on both until the webhook: the change is not known before.
    expect([run.keptBeforeChange, run.keptBeforeWebhook, run.webhookStatus, run.afterAck]).toEqual(['PENDING', 'PENDING', 200, 'APPROVED']);
    expect(run.errors).toEqual([]);
    expect(run.late).toEqual([]);
  });

  // Last: it stops the shared redis-server.
  it('reads a pending payment upstream on every poll once Redis is gone', async () => {
    const pending = await make.transaction({ amount: 603 });
    await readStatus(a.url, key, pending.id);
    await redis.stop();
    await eventually(() => fetch(a.url.replace(/\/graphql$/, '/readyz')).then((r) => r.json() as Promise<{ degraded?: string[] }>), (r) => r.degraded?.includes('redis') === true, 5_000);
    await resetCounts();
    expect(await pollsOneByOneThenTogether(a.url, b.url, key, pending.id)).toEqual(Array.from({ length: 10 }, () => 'PENDING'));
    expect(await reads()).toBe(10);
  });
});
