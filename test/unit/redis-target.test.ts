import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { describeTarget, parseSeeds, redisTarget } from '../../src/redis-target.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
}

describe('where the shared state lives', () => {
  it('reads one server, a cluster or Sentinel from their variables', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis).toMatchObject({ mode: 'url', url: 'redis://127.0.0.1:6379', replicaAcks: 0, tls: false });
    expect(loadConfig({ REDIS_URL: 'rediss://cache.example:6380' }).redis).toMatchObject({ mode: 'url', tls: true });
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001' }).redis).toMatchObject({
      mode: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      replicaAcks: 1,
    });
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379,[::1]:26380', REDIS_SENTINEL_MASTER: 'mymaster', REDIS_PASSWORD: 'pw', REDIS_TLS: 'true' }).redis).toMatchObject({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      master: 'mymaster',
      password: 'pw',
      tls: true,
      replicaAcks: 1,
    });
    expect(loadConfig({}).redis).toBeNull();
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:1', REDIS_REPLICA_ACKS: '0' }).redis).toMatchObject({ replicaAcks: 0 });
  });

  it('stops the start on two modes at once, naming both', () => {
    expect(problems({ REDIS_URL: 'redis://x:6379', REDIS_CLUSTER_NODES: 'a:1' })).toEqual([expect.stringMatching(/^REDIS_URL, REDIS_CLUSTER_NODES: set one of them/)]);
    expect(problems({ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2', REDIS_SENTINEL_MASTER: 'm' })).toEqual([expect.stringMatching(/^REDIS_CLUSTER_NODES, REDIS_SENTINELS: set one/)]);
  });

  it('names a seed that is not host:port', () => {
    expect(problems({ REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2' })).toEqual([expect.stringContaining('REDIS_CLUSTER_NODES: "10.0.0.2" is not host:port')]);
    expect(problems({ REDIS_SENTINELS: 'host:99999', REDIS_SENTINEL_MASTER: 'm' })).toEqual([expect.stringContaining('REDIS_SENTINELS: "host:99999" is not host:port')]);
    expect(parseSeeds('redis://a:1')).toEqual({ ok: false, bad: 'redis://a:1' });
    expect(parseSeeds('a:0')).toEqual({ ok: false, bad: 'a:0' });
  });

  it('wants the master name and the sentinels together', () => {
    expect(problems({ REDIS_SENTINELS: 'a:1' })).toEqual([expect.stringContaining('REDIS_SENTINEL_MASTER: is required with REDIS_SENTINELS')]);
    expect(problems({ REDIS_SENTINEL_MASTER: 'm' })).toEqual([expect.stringContaining('REDIS_SENTINEL_MASTER: is set without REDIS_SENTINELS')]);
  });

  it('lists the Redis problems with every other one', () => {
    const found = problems({ PORT: 'x', REDIS_CLUSTER_NODES: 'nope' });
    expect(found.map((p) => p.split(':')[0])).toEqual(['PORT', 'REDIS_CLUSTER_NODES']);
  });

  it('describes a target without its password', () => {
    expect(describeTarget(redisTarget({ REDIS_URL: 'redis://user:secret@h:1/0' })!)).toBe('redis://h:1/0');
    expect(describeTarget(redisTarget({ REDIS_CLUSTER_NODES: 'a:1,b:2', REDIS_PASSWORD: 'secret' })!)).toBe('cluster a:1,b:2');
    expect(describeTarget(redisTarget({ REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_MASTER: 'm', REDIS_PASSWORD: 'secret' })!)).toBe('sentinel m via a:1');
  });
});
