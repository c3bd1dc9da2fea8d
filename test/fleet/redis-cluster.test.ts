/**
 * Three gateway processes over a real Redis Cluster (three masters, three replicas), through the SIGKILL of the
 * master holding some accounts' events and payments: every approval reaches its subscriber once, and no keyed
 * payment is created twice, with the payments API ignoring Idempotency-Key.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '../support/tools.js';
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-topologies.js';
import { runScenario, startFleet, type Fleet } from './scenario.js';

describeWith('redis-server', 'a fleet over a Redis Cluster', () => {
  describeWith('redis-cli', 'three gateways, one master killed under load', () => {
    let cluster: RedisClusterHandle;
    let fleet: Fleet;

    beforeAll(async () => {
      cluster = await startRedisCluster();
      fleet = await startFleet({ REDIS_CLUSTER_NODES: cluster.seeds });
    }, 120_000);

    afterAll(async () => {
      await fleet?.stop();
      await cluster?.stop();
    }, 60_000);

    it('loses no event and doubles no payment through a master failover', async () => {
      let failover: { promoted: number; tookMs: number } | null = null;
      const tally = await runScenario(fleet, {
        accounts: 6,
        perAccount: 4,
        payments: 3,
        fault: async () => {
          // The master of partition 0's slot: some accounts' events and records live there.
          failover = await cluster.killMaster(await cluster.masterOf('payments-gateway:{events:0}:log'));
        },
      });
      console.info('fleet over a cluster:', JSON.stringify({ ...tally, failover }));
      expect(failover).not.toBeNull();
      expect(tally).toMatchObject({ approved: 24, seen: 24, lost: 0, twice: 0, payments: 18, created: 18, doubled: 0, degradedSeen: true, degradedAfter: [] });
    }, 180_000);
  });
});
