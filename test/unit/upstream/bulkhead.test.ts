/** The per-route cap: slots up to the limit, a bounded queue, a caller's share, freed slots round-robin. */
import { describe, expect, it } from 'vitest';
import { Bulkhead } from '../../../src/upstream/bulkhead.js';

const held = async (bulkhead: Bulkhead, caller = '', waitMs = 1_000, signal?: AbortSignal) => {
  const release = await bulkhead.acquire(waitMs, signal, caller);
  if (release === false) throw new Error('no slot');
  return release;
};

describe('Bulkhead', () => {
  it('grants up to its limit at once, queues the next, and hands a freed slot to the first waiting', async () => {
    const bulkhead = new Bulkhead(2, 5);
    const first = await held(bulkhead);
    await held(bulkhead);
    expect(bulkhead.inFlight).toBe(2);
    const waiting = bulkhead.acquire(1_000);
    expect(bulkhead.queued).toBe(1);
    first();
    first();
    const third = await waiting;
    expect(third).toBeTypeOf('function');
    expect([bulkhead.inFlight, bulkhead.queued]).toEqual([2, 0]);
  });

  it('refuses at once when the queue is full or the caller will not wait', async () => {
    const bulkhead = new Bulkhead(1, 1);
    await held(bulkhead);
    expect(await bulkhead.acquire(0)).toBe(false);
    const queued = bulkhead.acquire(1_000);
    expect(await bulkhead.acquire(1_000)).toBe(false);
    expect(bulkhead.queued).toBe(1);
    void queued;
  });

  it('gives up after its wait or on abort, and leaves the queue', async () => {
    const bulkhead = new Bulkhead(1, 5);
    const release = await held(bulkhead);
    const started = Date.now();
    expect(await bulkhead.acquire(30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const abort = new AbortController();
    const aborted = bulkhead.acquire(10_000, abort.signal);
    expect(bulkhead.queued).toBe(1);
    abort.abort();
    expect(await aborted).toBe(false);
    expect(bulkhead.queued).toBe(0);
    release();
    expect(bulkhead.inFlight).toBe(0);
  });

  it('holds a caller to its share, so another caller gets a slot while it floods', async () => {
    const bulkhead = new Bulkhead(4, 20, 0.5);
    await held(bulkhead, 'flood');
    await held(bulkhead, 'flood');
    const third = bulkhead.acquire(1_000, undefined, 'flood');
    expect(bulkhead.queued).toBe(1);
    // Two slots are free, but not for the caller at its share.
    await held(bulkhead, 'quiet');
    expect(bulkhead.inFlight).toBe(3);
    // Its share of the queue is half the queue too.
    const more = Array.from({ length: 9 }, () => bulkhead.acquire(1_000, undefined, 'flood'));
    expect(await bulkhead.acquire(1_000, undefined, 'flood')).toBe(false);
    void third;
    void more;
  });

  it('hands freed slots round-robin between the callers waiting', async () => {
    const bulkhead = new Bulkhead(1, 10);
    const release = await held(bulkhead, 'a');
    const order: string[] = [];
    // Each waiter, once granted, uses its slot and frees it at once.
    const wait = (caller: string) => bulkhead.acquire(1_000, undefined, caller).then((granted) => {
      order.push(caller);
      if (granted) granted();
    });
    const waits = [wait('a'), wait('a'), wait('a'), wait('b'), wait('c')];
    release();
    await Promise.all(waits);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'a']);
  });
});
