/**
 * The memory store's generations (four per object it may hold) grow with what it has evicted, not with its
 * bound: at the default 50,000 objects, slots made up front were about 5 MB of an idle gateway's heap.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../../src/cache/store.js';

const MB = 1024 * 1024;

describe('memory entity store, memory', () => {
  it('allocates no generation slots up front', () => {
    const before = process.memoryUsage().heapUsed;
    // 1,000,000 generations: about 16 MB of slots up front; the objects' own LRU still takes about 6 MB.
    const store = memoryStore(250_000);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(12 * MB);
    expect(store).toBeDefined();
  });

  it('still bounds its generations at four per object', async () => {
    const store = memoryStore(1);
    const seen = await store.read('a', 'customer', [1]);
    for (const id of [1, 2, 3, 4, 5]) await store.evict('customer', [id]);
    // Generation of object 1 pushed out by four later ones: a write with the generation read before is taken.
    expect((await store.read('a', 'customer', [1])).generations[0]).toBe(seen.generations[0]);
  });
});
