/** Reads in flight across operations (src/cache/in-flight.ts): joined by key, object and generation only, bounded, released by their leader. */
import { describe, expect, it } from 'vitest';
import { inFlightReads } from '../../../src/cache/in-flight.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const read = Promise.resolve({ id: 1 });

describe('reads in flight', () => {
  it('is joined by the same key, kind, id and generation only', () => {
    const reads = inFlightReads();
    reads.lead(A, 'transaction', 1, '3', read);
    expect(reads.join(A, 'transaction', 1, '3')).toBe(read);
    expect(reads.join(B, 'transaction', 1, '3')).toBeUndefined();
    expect(reads.join(A, 'payout', 1, '3')).toBeUndefined();
    expect(reads.join(A, 'transaction', 2, '3')).toBeUndefined();
    // An eviction since the leader read the store: its answer may predate the change.
    expect(reads.join(A, 'transaction', 1, '4')).toBeUndefined();
    expect(reads.join(A, 'transaction', 1, null)).toBeUndefined();
  });

  it('is forgotten at its release, and a newer read of the object takes its place', () => {
    const reads = inFlightReads();
    const older = reads.lead(A, 'transaction', 1, null, read);
    const newer = Promise.resolve({ id: 1, newer: true });
    const release = reads.lead(A, 'transaction', 1, '1', newer);
    expect(reads.join(A, 'transaction', 1, '1')).toBe(newer);
    expect(reads.size).toBe(1);
    // The older read's release leaves the newer one in place.
    older();
    expect(reads.join(A, 'transaction', 1, '1')).toBe(newer);
    release();
    expect(reads.join(A, 'transaction', 1, '1')).toBeUndefined();
    expect(reads.size).toBe(0);
  });

  it('keeps no more than its bound, nor more than one key\'s share of it', () => {
    const reads = inFlightReads({ max: 3, perCaller: 2 });
    const releases = [reads.lead(A, 'transaction', 1, null, read), reads.lead(A, 'transaction', 2, null, read)];
    reads.lead(A, 'transaction', 3, null, read);
    expect(reads.join(A, 'transaction', 3, null)).toBeUndefined();
    reads.lead(B, 'transaction', 1, null, read);
    reads.lead(B, 'transaction', 2, null, read);
    expect(reads.size).toBe(3);
    expect(reads.join(B, 'transaction', 2, null)).toBeUndefined();
    for (const release of releases) release();
    reads.lead(A, 'transaction', 3, null, read);
    expect(reads.join(A, 'transaction', 3, null)).toBe(read);
  });

  it('counts a newer read that takes an object\'s place once against its key\'s share, and lets it in at the bound', () => {
    const reads = inFlightReads({ max: 2, perCaller: 2 });
    reads.lead(A, 'transaction', 1, null, read);
    const newer = Promise.resolve({ id: 1, newer: true });
    // At neither bound yet: a second read of the object replaces the first, and holds one place.
    reads.lead(A, 'transaction', 1, '1', newer);
    const second = Promise.resolve({ id: 2 });
    reads.lead(A, 'transaction', 2, null, second);
    expect(reads.join(A, 'transaction', 2, null)).toBe(second);
    // Both bounds reached: a newer read of an object in flight still takes its place.
    const newest = Promise.resolve({ id: 1, newest: true });
    reads.lead(A, 'transaction', 1, '2', newest);
    expect(reads.join(A, 'transaction', 1, '2')).toBe(newest);
    expect(reads.size).toBe(2);
  });

  it('gives a key its share back at each release, and a read refused at the bound releases nothing', () => {
    const reads = inFlightReads({ max: 10, perCaller: 1 });
    const refused = Promise.resolve({ id: 2 });
    const first = reads.lead(A, 'transaction', 1, null, read);
    const none = reads.lead(A, 'transaction', 2, null, refused);
    none();
    expect(reads.join(A, 'transaction', 1, null)).toBe(read);
    expect(reads.join(A, 'transaction', 2, null)).toBeUndefined();
    first();
    const again = reads.lead(A, 'transaction', 2, null, refused);
    expect(reads.join(A, 'transaction', 2, null)).toBe(refused);
    again();
    // Released twice: the share is not handed back twice.
    again();
    reads.lead(A, 'transaction', 3, null, read);
    reads.lead(A, 'transaction', 4, null, read);
    expect(reads.join(A, 'transaction', 4, null)).toBeUndefined();
  });

  it('hands back one place per release, not the key\'s whole share', () => {
    const reads = inFlightReads({ max: 10, perCaller: 2 });
    const first = reads.lead(A, 'transaction', 1, null, read);
    reads.lead(A, 'transaction', 2, null, read);
    first();
    reads.lead(A, 'transaction', 3, null, read);
    reads.lead(A, 'transaction', 4, null, read);
    expect(reads.join(A, 'transaction', 3, null)).toBe(read);
    expect(reads.join(A, 'transaction', 4, null)).toBeUndefined();
  });
});
