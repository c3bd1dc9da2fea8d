/**
 * The buffer of an instance's recent appends: bounded by age, count and bytes; past its age the oldest go first,
 * past its count or bytes the oldest of the account holding the most bytes.
 */
import { expect, it } from 'vitest';
import { RecentAppends, type RecentAppend } from '../../../src/realtime/recent-appends.js';

const entry = (at: number, bytes = 10, account = 1): RecentAppend => ({ at, bytes, partition: 0, account, redo: async () => [0] });
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

it("an account flooding it pushes out its own entries, never a quieter account's", () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 100, maxBytes: 10_000 }, () => 0);
  recent.add(entry(0, 10, 7));
  recent.add(entry(1, 10, 8));
  for (let at = 2; at < 5_000; at++) recent.add(entry(at, 50, 9));
  const kept = recent.take();
  expect(kept.filter((e) => e.account !== 9).map((e) => [e.at, e.account])).toEqual([[0, 7], [1, 8]]);
  expect(kept.length).toBe(100);
  // The flood's newest stay, oldest first after the quiet ones.
  expect(ats(kept.filter((e) => e.account === 9)).slice(-2)).toEqual([4_998, 4_999]);
});

it('over its bytes, takes from the account holding the most bytes, not the most entries', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 1_000, maxBytes: 100 }, () => 0);
  recent.add(entry(0, 60, 1));
  for (let at = 1; at <= 4; at++) recent.add(entry(at, 10, 2));
  recent.add(entry(5, 10, 3));
  expect(recent.byteSize).toBe(110 - 60);
  expect(recent.take().map((e) => e.account)).toEqual([2, 2, 2, 2, 3]);
});

it('many light accounts against one bystander: each keeps an even share, the bystander its newest', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 40, maxBytes: 1_000_000 }, () => 0);
  for (let at = 0; at < 30; at++) recent.add(entry(at, 10, 0));
  for (let account = 1; account <= 30; account++) recent.add(entry(100 + account, 10, account));
  const kept = recent.take();
  const bystander = kept.filter((e) => e.account === 0);
  expect(kept.length).toBe(40);
  // 30 light accounts with one entry each: the bystander keeps the 10 left, its newest.
  expect(ats(bystander)).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  expect(new Set(kept.map((e) => e.account)).size).toBe(31);
});

it('drops by age across accounts after entries left from a share, and stays bounded with many accounts', () => {
  let now = 0;
  const recent = new RecentAppends({ maxAgeMs: 100, maxEntries: 50, maxBytes: 1_000_000 }, () => now);
  for (let at = 0; at < 20_000; at++) {
    now = at;
    recent.add(entry(at, 10, at % 3 === 0 ? 1 : 2 + (at % 500)));
  }
  const kept = recent.take();
  expect(kept.length).toBeLessThanOrEqual(50);
  expect(kept.every((e) => e.at >= 20_000 - 1 - 100)).toBe(true);
  expect(ats(kept)).toEqual([...ats(kept)].sort((a, b) => a - b));
  expect([recent.size, recent.byteSize]).toEqual([0, 0]);
});
