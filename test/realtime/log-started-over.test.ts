/**
 * Redis back empty, between two instances of the event log: an entry one appended (and delivered to its own
 * listeners) that the other had not read when Redis died is appended again once the log started over, and reaches
 * the other; none is delivered twice, on either side, whether the other had read it or not.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { RedisLinks } from '../../src/redis.js';
import { singleServer } from '../../src/redis-target.js';
import type { PaymentEvent } from '../../src/realtime/events.js';
import { redisEventLog, type RedisEventLog } from '../../src/realtime/redis-log.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { eventually, sleep } from './support.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const ACCOUNT = 41;
const logger = createLogger('silent');

const approval = (id: number, objectId: number): Omit<PaymentEvent, 'current'> => {
  const at = new Date(Date.UTC(2026, 0, 1, 10, 0, id)).toISOString();
  return { id, type: 'transaction.approved', object: 'transaction', objectId, accountId: ACCOUNT, entity: { id: objectId, status: 'approved', updated_at: at }, createdAt: at };
};

describeWith('redis-server', 'the event log started over (Redis back empty)', () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let here: RedisEventLog;
  let there: RedisEventLog;
  const got = { here: [] as number[], there: [] as number[] };

  beforeAll(async () => {
    redis = await startRedisServer();
    // The other instance reads through a proxy that can stop forwarding: its reader is behind when Redis dies.
    proxy = await startTcpProxy(redis.port);
    const open = (port: number) => redisEventLog({ target: singleServer(`redis://127.0.0.1:${port}`), prefix: 'started-over:', logger, links: new RedisLinks(logger), maxEvents: 1000 });
    [here, there] = await Promise.all([open(redis.port), open(proxy.port)]);
    here.subscribe(ACCOUNT, (e) => got.here.push(e.id));
    there.subscribe(ACCOUNT, (e) => got.there.push(e.id));
  }, 30_000);
  afterAll(async () => {
    await Promise.all([here?.close(), there?.close()]);
    await proxy?.close();
    await redis?.stop();
  });

  const emptyRestart = async () => {
    await redis.kill();
    redis = await startRedisServer([], redis.port);
  };

  it('appends again what the other instance had not read, and delivers nothing twice', async () => {
    // Read by both before the fault: appended again, dropped by both.
    expect(await here.append(approval(1, 501))).toBe('accepted');
    await eventually(async () => got.there, (ids) => ids.includes(1), 5_000);
    proxy.stall();
    // Unread by the other when Redis dies.
    expect(await here.append(approval(2, 502))).toBe('accepted');
    expect(got.here).toEqual([1, 2]);
    await emptyRestart();
    proxy.resume();
    await eventually(async () => got.there, (ids) => ids.includes(2), 10_000);
    // A later append, after the log started over, reaches both once too.
    expect(await there.append(approval(3, 503))).toBe('accepted');
    await eventually(async () => got.here, (ids) => ids.includes(3), 5_000);
    // Long enough for a second delivery of anything appended again to arrive.
    await sleep(1_500);
    expect(got).toEqual({ here: [1, 2, 3], there: [1, 2, 3] });
  }, 40_000);
});
