/** The buffer of an instance's recent appends: bounded by age, count and bytes, the oldest going first. */
import { expect, it } from 'vitest';
import { RecentAppends, type RecentAppend } from '../../../src/realtime/recent-appends.js';

const entry = (at: number, bytes = 10): RecentAppend => ({ at, bytes, partition: 0, redo: async () => [0] });
const ats = (entries: RecentAppend[]) => entries.map((e) => e.at);

it('keeps the entries within the age, oldest first, and empties itself when taken', () => {
  let now = 1_000;
  const recent = new RecentAppends({ maxAgeMs: 100, maxEntries: 10, maxBytes: 1_000 }, () => now);
  for (const at of [900, 950, 1_000]) recent.add(entry(at));
  now = 1_060;
  expect(ats(recent.take())).toEqual([1_000]);
  expect(recent.take()).toEqual([]);
  expect(recent.byteSize).toBe(0);
});

it('drops the oldest past its count or its bytes, and never keeps one larger than all its bytes', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 3, maxBytes: 100 }, () => 0);
  for (const at of [1, 2, 3, 4]) recent.add(entry(at));
  expect(recent.size).toBe(3);
  recent.add(entry(5, 80));
  expect([recent.size, recent.byteSize]).toEqual([3, 100]);
  recent.add(entry(6, 20));
  expect([recent.size, recent.byteSize]).toEqual([2, 100]);
  recent.add(entry(7, 101));
  expect(ats(recent.take())).toEqual([5, 6]);
});

it('stays bounded over many more entries than it keeps', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 100, maxBytes: 1_000_000 }, () => 0);
  for (let at = 0; at < 50_000; at++) recent.add(entry(at));
  const kept = recent.take();
  expect([kept.length, kept[0]!.at, kept.at(-1)!.at]).toEqual([100, 49_900, 49_999]);
});

it('keeps an entry exactly at its age, and one exactly as large as all its bytes', () => {
  let now = 1_000;
  const recent = new RecentAppends({ maxAgeMs: 100, maxEntries: 10, maxBytes: 100 }, () => now);
  recent.add(entry(899, 1));
  recent.add(entry(900, 1));
  expect(ats(recent.take())).toEqual([900]);
  recent.add(entry(1_000, 100));
  expect([recent.size, recent.byteSize]).toEqual([1, 100]);
  now = 1_100;
  expect(ats(recent.take())).toEqual([1_000]);
});

it('gives back the room of the entries it dropped, not only their count', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 100, maxBytes: 1_000_000 }, () => 0);
  for (let at = 0; at < 50_000; at++) recent.add(entry(at));
  // The array behind it, not just the window over it: without compaction it would hold all 50,000.
  const held = (recent as unknown as { entries: RecentAppend[] }).entries.length;
  expect(held).toBeLessThan(2_500);
  expect(recent.size).toBe(100);
});

it('compacts only once the dropped entries outnumber the kept ones: it never moves more entries than it dropped', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 5_000, maxBytes: 1_000_000_000 }, () => 0);
  const inner = (recent as unknown as { entries: RecentAppend[] }).entries;
  let moved = 0;
  let dropped = 0;
  const splice = inner.splice.bind(inner);
  inner.splice = ((start: number, count: number) => {
    moved += inner.length - count;
    dropped += count;
    return splice(start, count);
  }) as typeof inner.splice;
  for (let at = 0; at < 60_000; at += 1) recent.add(entry(at));
  // So an add costs a constant on average, whatever it keeps.
  expect(dropped).toBeGreaterThan(40_000);
  expect(moved).toBeLessThan(dropped);
  expect(recent.size).toBe(5_000);
});
