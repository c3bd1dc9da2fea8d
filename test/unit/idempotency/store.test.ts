import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryIdempotencyStore } from '../../../src/idempotency/index.js';
import { idOf, RECORD_OVERHEAD_BYTES, type HeldRecord, type RecordJournal } from '../../../src/idempotency/store.js';

const LOCK = 5_000;
const TTL = 60_000;
const MARKER = RECORD_OVERHEAD_BYTES;

let now = 1_000_000;
function frozenClock(): void {
  vi.spyOn(Date, 'now').mockImplementation(() => now);
}
afterEach(() => {
  vi.restoreAllMocks();
});

async function completed(store: MemoryIdempotencyStore, caller: string, key: string, json = '"result"', ttl = TTL): Promise<void> {
  const claim = await store.claim(key, 'fp', LOCK, caller);
  if (claim.kind !== 'acquired') throw new Error(`expected to acquire ${key}, got ${claim.kind}`);
  expect(await store.complete(key, claim.owner, 'fp', json, ttl, caller)).toBe(true);
}

const big = (n: number) => JSON.stringify('x'.repeat(n));

describe('memory idempotency store: full means refused, never forgotten', () => {
  it('a caller at its record quota is refused a new claim; its own records and others\' all still replay', async () => {
    const store = new MemoryIdempotencyStore(1_000, 3);
    await completed(store, 'victim', 'victim-1');
    for (let i = 0; i < 3; i++) await completed(store, 'flooder', `flood-${i}`);
    expect((await store.claim('flood-3', 'fp', LOCK, 'flooder')).kind).toBe('full');
    for (let i = 0; i < 3; i++) expect((await store.claim(`flood-${i}`, 'fp', LOCK, 'flooder')).kind).toBe('completed');
    expect(await store.claim('victim-1', 'fp', LOCK, 'victim')).toEqual({ kind: 'completed', json: '"result"' });
    // Another caller has its own quota.
    expect((await store.claim('victim-2', 'fp', LOCK, 'victim')).kind).toBe('acquired');
  });

  it('a store full of records refuses the newcomer and drops nobody\'s finished record', async () => {
    const store = new MemoryIdempotencyStore(4, 3);
    for (const key of ['a-1', 'a-2', 'a-3']) await completed(store, 'a', key);
    await completed(store, 'b', 'b-1');
    expect((await store.claim('c-1', 'fp', LOCK, 'c')).kind).toBe('full');
    for (const [caller, key] of [['a', 'a-1'], ['a', 'a-2'], ['a', 'a-3'], ['b', 'b-1']] as const) {
      expect((await store.claim(key, 'fp', LOCK, caller)).kind).toBe('completed');
    }
    expect(store.size).toBe(4);
  });

  it('a running claim is never dropped either', async () => {
    const store = new MemoryIdempotencyStore(2, 2);
    expect((await store.claim('a-1', 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect((await store.claim('b-1', 'fp', LOCK, 'b')).kind).toBe('acquired');
    expect((await store.claim('c-1', 'fp', LOCK, 'c')).kind).toBe('full');
    expect((await store.claim('a-1', 'fp', LOCK, 'a')).kind).toBe('in_progress');
  });

  it('a key already held is answered from its record even when the store is full', async () => {
    const store = new MemoryIdempotencyStore(1, 1);
    await completed(store, 'a', 'a-1');
    expect(await store.claim('a-1', 'other', LOCK, 'a')).toEqual({ kind: 'mismatch' });
    expect(await store.claim('a-1', 'fp', LOCK, 'a')).toEqual({ kind: 'completed', json: '"result"' });
  });

  it('a key released (open) is taken again in its own place, even when the store is full', async () => {
    const store = new MemoryIdempotencyStore(1, 1);
    const claim = await store.claim('a-1', 'fp', LOCK, 'a');
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.release('a-1', claim.owner, 'fp', TTL, 'a');
    expect((await store.claim('a-1', 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect(store.size).toBe(1);
    expect(store.heldBytes).toBe(MARKER);
  });
});

describe('memory idempotency store bytes', () => {
  it('a result past the caller\'s byte quota is kept as a marker: the key stays taken, earlier results stay whole', async () => {
    // 1 MiB per caller; each result is about 200 KB (400 KB counted: UTF-16).
    const store = new MemoryIdempotencyStore(1_000, 1_000, 1024 * 1024, 64 * 1024 * 1024);
    await completed(store, 'victim', 'victim-1');
    for (let i = 0; i < 4; i++) await completed(store, 'flooder', `flood-${i}`, big(200_000));
    expect((await store.claim('flood-0', 'fp', LOCK, 'flooder'))).toEqual({ kind: 'completed', json: big(200_000) });
    expect((await store.claim('flood-1', 'fp', LOCK, 'flooder'))).toEqual({ kind: 'completed', json: big(200_000) });
    expect((await store.claim('flood-2', 'fp', LOCK, 'flooder'))).toEqual({ kind: 'completed', json: '!' });
    expect((await store.claim('flood-3', 'fp', LOCK, 'flooder'))).toEqual({ kind: 'completed', json: '!' });
    expect(await store.claim('victim-1', 'fp', LOCK, 'victim')).toEqual({ kind: 'completed', json: '"result"' });
    expect(store.heldBytes).toBeLessThanOrEqual(1024 * 1024 + 2 * MARKER);
  });

  it('a result past the store\'s byte bound is kept as a marker, and the bound is never crossed', async () => {
    const store = new MemoryIdempotencyStore(1_000, 1_000, 1024 * 1024, 1024 * 1024);
    await completed(store, 'a', 'a-1', big(200_000));
    await completed(store, 'b', 'b-1', big(200_000));
    await completed(store, 'c', 'c-1', big(200_000));
    expect(await store.claim('a-1', 'fp', LOCK, 'a')).toEqual({ kind: 'completed', json: big(200_000) });
    expect(await store.claim('b-1', 'fp', LOCK, 'b')).toEqual({ kind: 'completed', json: big(200_000) });
    expect(await store.claim('c-1', 'fp', LOCK, 'c')).toEqual({ kind: 'completed', json: '!' });
    expect(store.heldBytes).toBe(2 * (MARKER + big(200_000).length * 2) + MARKER);
  });

  it('a claim is refused once only its marker would cross the byte bound', async () => {
    const store = new MemoryIdempotencyStore(1_000, 1_000, 3 * MARKER, 3 * MARKER);
    for (const key of ['1', '2', '3']) expect((await store.claim(key, 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect(store.heldBytes).toBe(3 * MARKER);
    expect((await store.claim('4', 'fp', LOCK, 'b')).kind).toBe('full');
  });

  it('a caller\'s byte quota refuses its claims while others still claim', async () => {
    const store = new MemoryIdempotencyStore(1_000, 1_000, 2 * MARKER, 10 * MARKER);
    for (const key of ['1', '2']) expect((await store.claim(key, 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect((await store.claim('3', 'fp', LOCK, 'a')).kind).toBe('full');
    expect((await store.claim('1', 'fp', LOCK, 'b')).kind).toBe('acquired');
  });

  it('a result that exactly fills the bound is kept whole', async () => {
    const json = big(1000);
    const exact = MARKER + json.length * 2;
    const store = new MemoryIdempotencyStore(1_000, 1_000, exact, exact);
    await completed(store, 'a', 'k', json);
    expect(await store.claim('k', 'fp', LOCK, 'a')).toEqual({ kind: 'completed', json });
    expect(store.heldBytes).toBe(exact);
  });
});

describe('memory idempotency store: expiry gives room back, exactly', () => {
  it('expired records are swept when room is needed, and the bytes they held count again to the byte', async () => {
    frozenClock();
    const store = new MemoryIdempotencyStore(1_000, 1_000, 1024 * 1024, 4 * (MARKER + 6));
    // Many rounds of records that expire and are replaced: any drift in the count would show at the bound.
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 4; i++) await completed(store, `c${i}`, `r${round}`, '"x"', 10);
      expect(store.heldBytes).toBe(4 * (MARKER + 6));
      expect((await store.claim(`r${round}-late`, 'fp', LOCK, 'late')).kind).toBe('full');
      now += 2_000;
    }
    expect(store.heldBytes).toBe(4 * (MARKER + 6));
    // The last round's records expired too: room for exactly four markers.
    for (let i = 0; i < 4; i++) expect((await store.claim(`m${i}`, 'fp', LOCK, 'm')).kind).toBe('acquired');
    expect(store.heldBytes).toBe(4 * MARKER);
    expect((await store.claim('m4', 'fp', LOCK, 'm')).kind).toBe('full');
    expect(store.size).toBe(4);
  });

  it('a caller\'s own bytes count back when its records expire: its quota takes new claims again', async () => {
    frozenClock();
    const store = new MemoryIdempotencyStore(1_000, 1_000, 2 * MARKER, 1024 * 1024);
    // One record that stays, one that expires: the caller's tally must lose exactly the one.
    expect((await store.claim('1', 'fp', 60_000, 'a')).kind).toBe('acquired');
    expect((await store.claim('2', 'fp', 10, 'a')).kind).toBe('acquired');
    expect((await store.claim('3', 'fp', LOCK, 'a')).kind).toBe('full');
    now += 2_000;
    expect((await store.claim('3', 'fp', LOCK, 'a')).kind).toBe('acquired');
    expect((await store.claim('4', 'fp', LOCK, 'a')).kind).toBe('full');
  });

  it('sweeps at most once a second: records expired since the last sweep wait for the next', async () => {
    frozenClock();
    const store = new MemoryIdempotencyStore(2, 2);
    await completed(store, 'a', 'a-1', '"x"', 10);
    await completed(store, 'a', 'a-2', '"x"', 1_200);
    now += 1_000;
    expect((await store.claim('b-1', 'fp', LOCK, 'b')).kind).toBe('acquired');
    now += 500;
    // a-2 expired, but the last sweep was half a second ago.
    expect((await store.claim('b-2', 'fp', LOCK, 'b')).kind).toBe('full');
    now += 500;
    expect((await store.claim('b-2', 'fp', LOCK, 'b')).kind).toBe('acquired');
  });

  it('a claim whose lock expired can still complete when nobody took the key: in the bytes its claim reserved', async () => {
    frozenClock();
    const store = new MemoryIdempotencyStore(1, 1, 1024 * 1024, MARKER);
    const slow = await store.claim('k', 'fp', 50, 'a');
    if (slow.kind !== 'acquired') throw new Error(slow.kind);
    now += 100;
    expect(await store.complete('k', slow.owner, 'fp', '"late"', TTL, 'a')).toBe(true);
    expect(await store.claim('k', 'fp', LOCK, 'a')).toEqual({ kind: 'completed', json: '!' });
  });

  it('a late completion whose claim was swept for another finds no room and stores nothing', async () => {
    frozenClock();
    const store = new MemoryIdempotencyStore(1, 1, 1024 * 1024, 1024 * 1024);
    const slow = await store.claim('k', 'fp', 50, 'a');
    if (slow.kind !== 'acquired') throw new Error(slow.kind);
    now += 2_000;
    expect((await store.claim('other', 'fp', LOCK, 'b')).kind).toBe('acquired');
    expect(await store.complete('k', slow.owner, 'fp', '"late"', TTL, 'a')).toBe(false);
    expect(store.size).toBe(1);
    expect((await store.peek('k', 'fp', 'a')).kind).toBe('none');
  });

  it('a late completion whose claim was swept takes room of its own when there is some', async () => {
    frozenClock();
    const store = new MemoryIdempotencyStore(10, 10, 1024 * 1024, 2 * MARKER + 4);
    const slow = await store.claim('k', 'fp', 50, 'a');
    if (slow.kind !== 'acquired') throw new Error(slow.kind);
    expect((await store.claim('held', 'fp', LOCK, 'b')).kind).toBe('acquired');
    now += 2_000;
    // A full result would not fit beside b's claim once the sweep took a's: the marker does.
    expect(await store.complete('k', slow.owner, 'fp', '"late"', TTL, 'a')).toBe(true);
    expect(await store.peek('k', 'fp', 'a')).toEqual({ kind: 'completed', json: '!' });
  });
});

describe('memory idempotency store: what a journal is told', () => {
  function journal(fail = false) {
    const writes: [string, HeldRecord['body']['s']][] = [];
    const removed: string[] = [];
    const j: RecordJournal = {
      write: async (id, record) => {
        if (fail) throw new Error('disk full');
        writes.push([id, record.body.s]);
      },
      remove: (id) => removed.push(id),
    };
    return { j, writes, removed };
  }

  it('every state written, every sweep removed', async () => {
    frozenClock();
    const { j, writes, removed } = journal();
    const store = new MemoryIdempotencyStore(2, 2, 1024 * 1024, 1024 * 1024, j);
    await completed(store, 'a', 'k', '"x"', 10);
    const other = await store.claim('o', 'fp', LOCK, 'a');
    if (other.kind !== 'acquired') throw new Error(other.kind);
    await store.release('o', other.owner, 'fp', 10, 'a');
    expect(writes).toEqual([[idOf('a', 'k'), 'running'], [idOf('a', 'k'), 'done'], [idOf('a', 'o'), 'running'], [idOf('a', 'o'), 'open']]);
    now += 2_000;
    await store.claim('n1', 'fp', LOCK, 'b');
    await store.claim('n2', 'fp', LOCK, 'b');
    expect(removed.sort()).toEqual([idOf('a', 'k'), idOf('a', 'o')].sort());
  });

  it('a claim the journal cannot keep is not taken', async () => {
    const { j } = journal(true);
    const store = new MemoryIdempotencyStore(2, 2, 1024 * 1024, 1024 * 1024, j);
    await expect(store.claim('k', 'fp', LOCK, 'a')).rejects.toThrow('disk full');
    expect(store.size).toBe(0);
    expect(store.heldBytes).toBe(0);
    expect((await store.peek('k', 'fp', 'a')).kind).toBe('none');
  });

  it('restored records count against the bounds, whatever they are', async () => {
    const store = new MemoryIdempotencyStore(1, 1);
    store.restore(idOf('a', 'k'), { caller: 'a', body: { s: 'done', fp: 'fp', v: '"kept"' }, expiresAt: Date.now() + TTL });
    store.restore(idOf('b', 'k'), { caller: 'b', body: { s: 'done', fp: 'fp', v: '"kept too"' }, expiresAt: Date.now() + TTL });
    expect(await store.peek('k', 'fp', 'a')).toEqual({ kind: 'completed', json: '"kept"' });
    expect(await store.peek('k', 'fp', 'b')).toEqual({ kind: 'completed', json: '"kept too"' });
    expect((await store.claim('n', 'fp', LOCK, 'c')).kind).toBe('full');
  });
});

describe('memory idempotency store: close', () => {
  it('wakes every waiter at once, so a shutdown waits on none of them', async () => {
    const store = new MemoryIdempotencyStore();
    const woken: string[] = [];
    const waits = ['a', 'a', 'b'].map((key, i) => store.changed(key, 60_000).then(() => void woken.push(`${key}${i}`)));
    await store.close();
    await Promise.race([Promise.all(waits), new Promise((r) => setTimeout(r, 1_000))]);
    expect(woken.sort()).toEqual(['a0', 'a1', 'b2']);
  });
});
