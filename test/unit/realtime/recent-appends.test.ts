/**
 * The buffer of an instance's recent appends: bounded by age, count and bytes, the oldest going first, with a share
 * per account over which that account's own oldest go.
 */
import { expect, it } from 'vitest';
import { RecentAppends, type RecentAppend } from '../../../src/realtime/recent-appends.js';

const entry = (at: number, bytes = 10, account = 1): RecentAppend => ({ at, bytes, partition: 0, account, redo: async () => [0] });
const ats = (entries: RecentAppend[]) => entries.map((e) => e.at);

it('keeps the entries within the age, oldest first, and empties itself when taken', () => {
  let now = 1_000;
  const recent = new RecentAppends({ maxAgeMs: 100, maxEntries: 10, maxBytes: 1_000, accountShare: 1 }, () => now);
  for (const at of [900, 950, 1_000]) recent.add(entry(at));
  now = 1_060;
  expect(ats(recent.take())).toEqual([1_000]);
  expect(recent.take()).toEqual([]);
  expect(recent.byteSize).toBe(0);
});

it('drops the oldest past its count or its bytes, and never keeps one larger than all its bytes', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 3, maxBytes: 100, accountShare: 1 }, () => 0);
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
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 100, maxBytes: 1_000_000, accountShare: 1 }, () => 0);
  for (let at = 0; at < 50_000; at++) recent.add(entry(at));
  const kept = recent.take();
  expect([kept.length, kept[0]!.at, kept.at(-1)!.at]).toEqual([100, 49_900, 49_999]);
});

it("an account flooding it pushes out its own entries, never a quieter account's", () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 100, maxBytes: 10_000, accountShare: 0.25 }, () => 0);
  recent.add(entry(0, 10, 7));
  recent.add(entry(1, 10, 8));
  for (let at = 2; at < 5_000; at++) recent.add(entry(at, 50, 9));
  const kept = recent.take();
  expect(kept.filter((e) => e.account !== 9).map((e) => [e.at, e.account])).toEqual([[0, 7], [1, 8]]);
  // The flood keeps a quarter of the entries, its newest.
  expect(ats(kept.filter((e) => e.account === 9))).toEqual(Array.from({ length: 25 }, (_, i) => 4_975 + i));
});

it("holds an account to its share of the bytes too, and keeps none larger than a share", () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 1_000, maxBytes: 100, accountShare: 0.5 }, () => 0);
  recent.add(entry(0, 30, 1));
  recent.add(entry(1, 30, 1));
  recent.add(entry(2, 10, 2));
  expect([recent.size, recent.byteSize]).toEqual([2, 40]);
  recent.add(entry(3, 51, 3));
  expect(recent.take().map((e) => [e.at, e.account])).toEqual([[1, 1], [2, 2]]);
});

it('past the whole, the oldest of all go: accounts within their shares fill it together', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 40, maxBytes: 1_000_000, accountShare: 0.25 }, () => 0);
  for (let at = 0; at < 10; at++) recent.add(entry(at, 10, 0));
  // Five accounts at their share of 10 each: 50 entries for 40 places, so the first ten (the bystander's) go.
  for (let at = 10; at < 60; at++) recent.add(entry(at, 10, 1 + (at % 5)));
  const kept = recent.take();
  expect(kept.length).toBe(40);
  expect(kept.filter((e) => e.account === 0)).toEqual([]);
  expect(ats(kept)).toEqual(Array.from({ length: 40 }, (_, i) => 20 + i));
});

it('lets a dropped entry go at once and holds few places, after a flood behind one quiet entry', () => {
  let now = 0;
  const recent = new RecentAppends({ maxAgeMs: 30_000, maxEntries: 1_000, maxBytes: 1_000_000, accountShare: 0.25 }, () => now);
  const quiet = entry(0, 10, 1);
  recent.add(quiet);
  for (let at = 1; at < 100_000; at++) {
    now = at / 4;
    recent.add(entry(now, 10, 2));
  }
  expect(recent.size).toBe(251);
  // The quiet entry, still within its age, does not hold the flood's dropped places alive behind it.
  expect(recent.places).toBeLessThan(4 * 1_000 + 4 * 1024);
  const kept = recent.take();
  expect(kept[0]).toBe(quiet);
  expect(kept.length).toBe(251);
});

it('drops by age across accounts, in order, and stays bounded with many accounts', () => {
  let now = 0;
  const recent = new RecentAppends({ maxAgeMs: 100, maxEntries: 50, maxBytes: 1_000_000, accountShare: 0.25 }, () => now);
  for (let at = 0; at < 20_000; at++) {
    now = at;
    recent.add(entry(at, 10, at % 3 === 0 ? 1 : 2 + (at % 500)));
  }
  expect(recent.places).toBeLessThan(4 * 50 + 4 * 1024);
  const kept = recent.take();
  expect(kept.length).toBe(50);
  expect(kept.every((e) => e.at >= 20_000 - 1 - 100)).toBe(true);
  expect(ats(kept)).toEqual([...ats(kept)].sort((a, b) => a - b));
  expect([recent.size, recent.byteSize, recent.places]).toEqual([0, 0, 0]);
});

it("keeps an entry exactly at its age, and one exactly as large as an account's share", () => {
  let now = 1_000;
  const recent = new RecentAppends({ maxAgeMs: 100, maxEntries: 10, maxBytes: 100, accountShare: 1 }, () => now);
  recent.add(entry(899, 1));
  recent.add(entry(900, 1));
  expect(ats(recent.take())).toEqual([900]);
  recent.add(entry(1_000, 100));
  expect([recent.size, recent.byteSize]).toEqual([1, 100]);
  now = 1_100;
  expect(ats(recent.take())).toEqual([1_000]);
});

it('counts as places every entry held in arrival order and in its share, and none before the first', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 100, maxBytes: 1_000_000, accountShare: 1 }, () => 0);
  expect(recent.places).toBe(0);
  for (const at of [1, 2, 3]) recent.add(entry(at, 10, 1));
  recent.add(entry(4, 10, 2));
  // Four in arrival order, three in the first account's share and one in the second's.
  expect(recent.places).toBe(8);
});

it('past the whole of its bytes, the oldest of all go, though each account is within its share', () => {
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 1_000, maxBytes: 100, accountShare: 0.25 }, () => 0);
  // Five accounts with 20 bytes each, within their 25: 100 bytes in all, then a sixth's pushes out the first.
  for (let account = 1; account <= 6; account++) recent.add(entry(account, 20, account));
  expect([recent.size, recent.byteSize]).toEqual([5, 100]);
  expect(recent.take().map((e) => e.account)).toEqual([2, 3, 4, 5, 6]);
});

it('holds at most about twice the places of what it keeps when a share holds over a thousand, behind one quiet entry', () => {
  // A share of 2,500 entries: the places dropped ahead and a share's dropped head pass 1,024 before they are half.
  const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries: 10_000, maxBytes: 1_000_000_000, accountShare: 0.25 }, () => 0);
  recent.add(entry(0, 10, 1));
  for (let at = 1; at <= 30_000; at++) recent.add(entry(at, 10, 2));
  expect(recent.size).toBe(2_501);
  // Arrival order and the flood's share each at most twice their live entries, and a few.
  expect(recent.places).toBeLessThanOrEqual(4 * recent.size + 4);
  const kept = recent.take();
  expect([kept[0]!.account, kept[1]!.at, kept.at(-1)!.at]).toEqual([1, 27_501, 30_000]);
});

it('holds few places while entries keep ageing out, many more than it keeps going through', () => {
  let now = 0;
  // Two thousand within the age: the places passed reach 1,024 before they are half of those held.
  const recent = new RecentAppends({ maxAgeMs: 2_000, maxEntries: 1_000_000, maxBytes: 1_000_000_000, accountShare: 1 }, () => now);
  for (let at = 0; at < 30_000; at++) {
    now = at;
    recent.add(entry(at, 10, 1));
  }
  expect(recent.size).toBe(2_001);
  // The places passed are let go once they are over 1,024 and over half: in arrival order and in the share.
  expect(recent.places).toBeLessThanOrEqual(4 * recent.size + 4);
});

it('lets go of dropped places in batches, not on every drop: only past 1,024 and past half of those held', () => {
  // Making room on every drop would cost a copy of the whole buffer per webhook; the places are counted by hand.
  const flood = (maxEntries: number, entries: number) => {
    const recent = new RecentAppends({ maxAgeMs: 1_000_000, maxEntries, maxBytes: 1_000_000_000, accountShare: 0.25 }, () => 0);
    recent.add(entry(0, 10, 1));
    for (let at = 1; at <= entries; at++) recent.add(entry(at, 10, 2));
    return [recent.size, recent.places];
  };
  // 350 dropped of 601 in order, of 600 in the flood's share: under 1,024, all still held (601 + 600 + the quiet 1).
  expect(flood(1_000, 600)).toEqual([251, 1_202]);
  // 1,100 dropped: past 1,024 but not past half of the 3,601 in order or of the 3,600 in the share.
  expect(flood(10_000, 3_600)).toEqual([2_501, 7_202]);
  const ageing = (maxAgeMs: number, entries: number) => {
    let now = 0;
    const recent = new RecentAppends({ maxAgeMs, maxEntries: 1_000_000, maxBytes: 1_000_000_000, accountShare: 1 }, () => now);
    for (let at = 0; at < entries; at++) {
      now = at;
      recent.add(entry(at, 10, 1));
    }
    return [recent.size, recent.places];
  };
  // Aged out: 49 passed of 150, under 1,024 and under half; 89 of 100, over half but under 1,024; 1,099 of 3,100, over
  // 1,024 but under half. Each still held, in order and in the share.
  expect(ageing(100, 150)).toEqual([101, 300]);
  expect(ageing(10, 100)).toEqual([11, 200]);
  expect(ageing(2_000, 3_100)).toEqual([2_001, 6_200]);
});
