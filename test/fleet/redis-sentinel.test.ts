/**
 * Three gateway processes over one master, one replica and three sentinels, through the SIGKILL of the master:
 * every approval reaches its subscriber once, and no keyed payment is created twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '../support/tools.js';
import { startRedisSentinel, type SentinelHandle } from '../support/redis-topologies.js';
import { runScenario, startFleet, type Fleet } from './scenario.js';

describeWith('redis-server', 'a fleet over Redis Sentinel', () => {
  let sentinel: SentinelHandle;
  let fleet: Fleet;

  beforeAll(async () => {
    sentinel = await startRedisSentinel();
    fleet = await startFleet({ REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master });
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    await sentinel?.stop();
  }, 60_000);

  it('loses no event and doubles no payment through a failover', async () => {
    let failover: { promoted: number; tookMs: number } | null = null;
    const tally = await runScenario(fleet, {
      accounts: 4,
      perAccount: 4,
      payments: 3,
      fault: async () => {
        failover = await sentinel.killMaster();
      },
    });
    console.info('fleet over sentinel:', JSON.stringify({ ...tally, failover }));
    expect(failover).not.toBeNull();
    expect(tally).toMatchObject({ approved: 16, seen: 16, lost: 0, twice: 0, payments: 12, created: 12, doubled: 0, degradedSeen: true, degradedAfter: [] });
  }, 180_000);
});
