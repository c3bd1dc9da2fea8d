/**
 * The entity cache is bounded in bytes, not only in objects: final
 * transactions carrying huge metadata, read one after another, hold the
 * cache's heap to ENTITY_CACHE_MAX_BYTES; one over ENTITY_CACHE_MAX_ENTRY_BYTES
 * is not kept at all (in memory or in Redis); and an honest small object is
 * still cached (its second read makes no upstream call).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startGatewayOver, startStack, type GatewayOnly, type Stack } from '../support/harness.js';
import { describeWith } from '../support/tools.js';
import { startRedisServer, type RedisServer } from '../realtime/redis-server.js';
import { heapUsed } from '../support/heap.js';

const MiB = 1024 * 1024;
const BUDGET = 4 * MiB;
const ENTRY_CAP = 512 * 1024;
const ONE = 'query ($id: ID!) { transaction(id: $id) { id status } }';
const READ = 'GET /v1/transactions/:id';


/** A final (canceled) transaction whose metadata holds `chars` characters. */
async function finalTransaction(make: ReturnType<typeof factories>, chars: number): Promise<RestObject> {
  const created = await make.transaction(chars > 0 ? { custom_metadata: { note: 'm'.repeat(chars) } } : {});
  await make.rest('PUT', `/v1/transactions/${created.id}`, { status: 'canceled' });
  return created;
}

function useCacheStack(env: Record<string, string>) {
  const ref: { stack?: Stack } = {};
  beforeAll(async () => {
    ref.stack = await startStack({ env: { ENTITY_CACHE_MAX_BYTES: String(BUDGET), ENTITY_CACHE_MAX_ENTRY_BYTES: String(ENTRY_CAP), RATE_LIMIT_PER_MINUTE: '0', ...env } });
  });
  afterAll(() => ref.stack?.stop());
  return () => ref.stack!;
}

async function readTwice(stack: Stack, key: string, id: number): Promise<number> {
  await stack.resetCounts();
  for (let i = 0; i < 2; i++) {
    const result = await stack.gql<{ transaction: { id: string; status: string } }>(ONE, { id: String(id) }, key);
    expect(result.errors).toBeUndefined();
    expect(result.data?.transaction).toMatchObject({ id: String(id), status: 'CANCELED' });
  }
  return stack.upstreamCalls(READ);
}

describe('entity cache in memory: bounded in bytes', () => {
  const stack = useCacheStack({});
  const key = newKey('cache-bytes');

  it('holds 60 final transactions of 400 KB metadata each to its byte budget', async () => {
    const make = factories(stack().emulator, key);
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) ids.push((await finalTransaction(make, 400_000)).id);
    // The same reads through a gateway with no entity cache: what everything but the cache keeps
    // (the emulator's request log holds a slice of each answer, and a slice keeps its whole string).
    const uncached = await startGatewayOver(stack().emulator.url, { ENTITY_CACHE: 'false', RATE_LIMIT_PER_MINUTE: '0' });
    const growthOver = async (gateway: Pick<GatewayOnly, 'gql'>) => {
      const before = heapUsed();
      for (const id of ids) expect((await gateway.gql(ONE, { id: String(id) }, key)).errors).toBeUndefined();
      return heapUsed() - before;
    };
    try {
      const control = await growthOver(uncached);
      const cached = await growthOver(stack());

      // 24 MB was read; the cache keeps at most its 4 MiB (an estimate of the heap), plus noise.
      expect(cached - control).toBeLessThan(BUDGET + 2 * MiB);
    } finally {
      await uncached.stop();
    }
  });

  it('keeps no object over the entry cap: each read of it goes upstream', async () => {
    const huge = await finalTransaction(factories(stack().emulator, key), 800_000);
    expect(await readTwice(stack(), key, huge.id)).toBe(2);
  });

  it('still caches an honest small final object: its second read makes no upstream call', async () => {
    const small = await finalTransaction(factories(stack().emulator, key), 0);
    expect(await readTwice(stack(), key, small.id)).toBe(1);
  });
});

describeWith('redis-server', 'entity cache in Redis: the entry cap', () => {
  let redis: RedisServer;
  let client: Redis;
  const ref: { stack?: Stack } = {};
  const key = newKey('cache-bytes-redis');
  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url);
    ref.stack = await startStack({ env: { REDIS_URL: redis.url, ENTITY_CACHE_MAX_ENTRY_BYTES: String(ENTRY_CAP), RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(async () => {
    await ref.stack?.stop();
    client.disconnect();
    await redis.stop();
  });
  const entriesOf = (id: number) => client.keys(`*:e:{transaction:${id}}:*`);

  it('writes no entry for an object over the cap, and reads it upstream each time', async () => {
    const huge = await finalTransaction(factories(ref.stack!.emulator, key), 800_000);
    expect(await readTwice(ref.stack!, key, huge.id)).toBe(2);
    expect(await entriesOf(huge.id)).toEqual([]);
  });

  it('still caches an honest small final object', async () => {
    const small = await finalTransaction(factories(ref.stack!.emulator, key), 0);
    expect(await readTwice(ref.stack!, key, small.id)).toBe(1);
    expect(await entriesOf(small.id)).toHaveLength(1);
  });
});
