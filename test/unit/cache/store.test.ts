import { describe, expect, it } from 'vitest';
import { estimateBytes } from '../../../src/cache/size.js';
import { memoryStore } from '../../../src/cache/store.js';
import { decode, encode } from '../../../src/upstream/codec.js';
import { Decimal } from '../../../src/upstream/decimal.js';

describe('memory entity store', () => {
  it('keeps copies per caller and evicts an object for every caller', async () => {
    const store = memoryStore(10);
    const a = await store.read('a', 'customer', [1]);
    await store.write('a', 'customer', [{ id: 1, value: { id: 1 }, ttlMs: 1000, generation: a.generations[0]! }]);
    expect((await store.read('a', 'customer', [1])).values).toEqual([{ id: 1 }]);
    expect((await store.read('b', 'customer', [1])).values).toEqual([undefined]);
    await store.evict('customer', [1]);
    expect((await store.read('a', 'customer', [1])).values).toEqual([undefined]);
  });

  it('drops a write whose object was evicted while the upstream call was in flight', async () => {
    const store = memoryStore(10);
    const before = await store.read('a', 'transaction', [7]);
    await store.evict('transaction', [7]);
    await store.write('a', 'transaction', [{ id: 7, value: { id: 7, status: 'old' }, ttlMs: 1000, generation: before.generations[0]! }]);
    expect((await store.read('a', 'transaction', [7])).values).toEqual([undefined]);
  });

  it('expires entries after their TTL', async () => {
    let now = 0;
    const store = memoryStore(10, () => now);
    await store.write('a', 'customer', [{ id: 1, value: { id: 1 }, ttlMs: 100, generation: null }]);
    now = 99;
    expect((await store.read('a', 'customer', [1])).values).toEqual([{ id: 1 }]);
    now = 100;
    expect((await store.read('a', 'customer', [1])).values).toEqual([undefined]);
  });
});

describe('memory entity store: byte bounds', () => {
  const bounds = { maxBytes: 100_000, maxEntryBytes: 20_000 };
  const sized = (id: number, chars: number) => ({ id, value: { id, note: 'n'.repeat(chars) }, ttlMs: 60_000, generation: null });

  it('holds at most its byte budget, dropping the least recently used, and counts every caller\'s copy', async () => {
    const store = memoryStore(1_000, Date.now, bounds);
    for (let id = 1; id <= 50; id++) await store.write('a', 'transaction', [sized(id, 10_000)]);
    expect(store.usage!().bytes).toBeLessThanOrEqual(bounds.maxBytes);
    expect(store.usage!().objects).toBeLessThan(10);
    expect((await store.read('a', 'transaction', [50])).values[0]).toMatchObject({ id: 50 });
    expect((await store.read('a', 'transaction', [1])).values[0]).toBeUndefined();

    // A second caller's copy of the same object weighs as much again: another object makes room.
    const objects = store.usage!().objects;
    await store.write('b', 'transaction', [sized(50, 10_000)]);
    expect((await store.read('b', 'transaction', [50])).values[0]).toMatchObject({ id: 50 });
    expect(store.usage!().objects).toBe(objects - 1);
    expect(store.usage!().bytes).toBeLessThanOrEqual(bounds.maxBytes);
  });

  it('does not keep an object over the entry cap, and drops the copy it replaces', async () => {
    const store = memoryStore(1_000, Date.now, bounds);
    await store.write('a', 'transaction', [sized(1, 1_000)]);
    await store.write('a', 'transaction', [sized(1, 30_000)]);
    expect((await store.read('a', 'transaction', [1])).values).toEqual([undefined]);
    expect(store.usage!()).toEqual({ objects: 0, bytes: 0 });
  });

  it('estimates strings by their characters, two bytes each past Latin-1, keys included, and stops past its limit', () => {
    expect(estimateBytes('é'.repeat(1_000))).toBeLessThan(estimateBytes('€'.repeat(1_000)));
    expect(estimateBytes({ ['k'.repeat(10_000)]: 1 })).toBeGreaterThan(10_000);
    expect(estimateBytes({ a: 'x'.repeat(5_000), b: 'y'.repeat(5_000) })).toBeGreaterThan(10_000);
    const limit = 1_000;
    expect(estimateBytes(Array.from({ length: 100 }, () => 'z'.repeat(1_000)), limit)).toBeLessThan(10 * limit);
  });
});

describe('entity codec', () => {
  it('brings amounts back as the same exact Decimals', () => {
    const amount = Decimal.fromJsonNumber('9007199254740993.10');
    const back = decode(encode({ g: '3', v: { id: 1, amount, fees: null, nested: [{ amount }] } })) as { v: { amount: Decimal; nested: { amount: Decimal }[] } };
    expect(back.v.amount).toBeInstanceOf(Decimal);
    expect(back.v.amount.toString()).toBe('9007199254740993.1');
    expect(back.v.nested[0]!.amount.equals(amount)).toBe(true);
  });

  it('brings objects of the data that look like tags back as they were, not as Decimals nor as an error', () => {
    const metadata = {
      looks: { $decimal: '12' },
      broken: { $decimal: 'not a number' },
      escaped: { $$decimal: '7', list: [{ $$$decimal: { $decimal: '1.5' } }] },
      two: { $decimal: '3', other: 1 },
    };
    const amount = Decimal.fromJsonNumber('0.1000000000000000055511151231257827');
    const back = decode(encode({ id: 1, amount, custom_metadata: metadata })) as { amount: Decimal; custom_metadata: unknown };
    expect(back.custom_metadata).toEqual(metadata);
    expect(back.amount).toBeInstanceOf(Decimal);
    expect(back.amount.equals(amount)).toBe(true);
  });
});
