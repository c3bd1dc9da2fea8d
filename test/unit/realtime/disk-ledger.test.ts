/**
 * The disk ledger: the ledger contract, and what a restart finds (claims and versions kept, expired ones swept),
 * within its bytes and each account's share.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DiskLedger, LEDGER_FILE } from '../../../src/realtime/disk-ledger.js';
import { DEDUPE_TTL_SECONDS, LAST_SEEN_TTL_SECONDS } from '../../../src/realtime/ledger.js';
import { ledgerTests } from './ledger.contract.js';

const root = mkdtempSync(path.join(tmpdir(), 'disk-ledger-'));
let dirs = 0;
const freshDir = () => path.join(root, `d${++dirs}`);
const opened: DiskLedger[] = [];
afterAll(async () => {
  for (const ledger of opened) await ledger.close().catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});
const MB = 1024 * 1024;
const openLedger = (dir: string, bounds = { maxBytes: 4 * MB, accountMaxBytes: 4 * MB }) => {
  const ledger = DiskLedger.open(dir, bounds);
  opened.push(ledger);
  return ledger;
};

describe('disk ledger', () => {
  ledgerTests(() => openLedger(freshDir()));
});

describe('disk ledger across a restart', () => {
  it('still knows the events it claimed and each object\'s latest version', async () => {
    const dir = freshDir();
    const before = openLedger(dir);
    expect(await before.claim(1, 10)).toBe(true);
    expect(await before.claim(1, 11)).toBe(true);
    await before.release(1, 11);
    expect(await before.advance('1:transaction:5', [2000, 10])).toBe(true);
    expect(await before.advanceTo('1:payout:6', 3000)).toBe(true);
    await before.close();

    const after = openLedger(dir);
    expect(await after.claim(1, 10)).toBe(false);
    // Released before the restart: taken again.
    expect(await after.claim(1, 11)).toBe(true);
    expect(await after.advance('1:transaction:5', [1000, 9])).toBe(false);
    expect(await after.advanceTo('1:payout:6', 3000)).toBe(false);
    // What the version replaced is kept too: undoing the latest goes back to it, not to nothing.
    expect(await after.advance('1:transaction:5', [2500, 12])).toBe(true);
    await after.close();
    const again = openLedger(dir);
    await again.retreat('1:transaction:5', [2500, 12]);
    expect(await again.advance('1:transaction:5', [1500, 13])).toBe(false);
  });

  it('sweeps claims that expired while it was down', async () => {
    const dir = freshDir();
    const before = openLedger(dir);
    await before.claim(1, 20);
    await before.close();
    const later = vi.spyOn(Date, 'now').mockReturnValue(Date.now() + DEDUPE_TTL_SECONDS * 1000 + 1);
    try {
      const after = openLedger(dir);
      expect(after.bytes).toBe(0);
      expect(await after.claim(1, 20)).toBe(true);
      await after.close();
    } finally {
      later.mockRestore();
    }
    expect(await keysOnDisk(dir)).toEqual(['c:1:20']);
  });
});

describe('disk ledger bounds', () => {
  it('forgets the least recently written past its bytes, on disk too, and after a restart in the same order', async () => {
    const dir = freshDir();
    // About 520 bytes a claim: room for three.
    const ledger = openLedger(dir, { maxBytes: 1600, accountMaxBytes: 1600 });
    for (const id of [1, 2, 3, 4]) expect(await ledger.claim(7, id)).toBe(true);
    expect(await ledger.claim(7, 4)).toBe(false);
    expect(await ledger.claim(7, 2)).toBe(false);
    await ledger.close();
    const db = open({ path: path.join(dir, LEDGER_FILE) });
    expect([...db.getKeys()].map(String).sort()).toEqual(['c:7:2', 'c:7:3', 'c:7:4']);
    await db.close();

    const after = openLedger(dir, { maxBytes: 1600, accountMaxBytes: 1600 });
    // Event 1 was forgotten: taken again, which drops the oldest written before the restart (event 2).
    expect(await after.claim(7, 1)).toBe(true);
    expect(await after.claim(7, 3)).toBe(false);
    expect(await after.claim(7, 2)).toBe(true);
  });

  it('keeps one account within its share: a flood of one account drops its own records, not another\'s', async () => {
    // Account 1 holds a claim and a version (about 1,200 bytes); account 2 may hold three claims.
    const ledger = openLedger(freshDir(), { maxBytes: 4000, accountMaxBytes: 1600 });
    expect(await ledger.claim(1, 1)).toBe(true);
    expect(await ledger.advance('1:transaction:1', [1000, 1])).toBe(true);
    for (let id = 1; id <= 100; id++) await ledger.claim(2, id);
    expect(await ledger.claim(1, 1)).toBe(false);
    expect(await ledger.advance('1:transaction:1', [900, 2])).toBe(false);
    // The flood's own oldest went.
    expect(await ledger.claim(2, 1)).toBe(true);
    expect(ledger.bytes).toBeLessThanOrEqual(4000);
  });

  it('refuses the delivery when its record cannot be written, and keeps what it had', async () => {
    const ledger = openLedger(freshDir());
    expect(await ledger.advance('1:transaction:9', [1000, 1])).toBe(true);
    const db = (ledger as unknown as { db: { put: (...args: unknown[]) => Promise<boolean> } }).db;
    const put = vi.spyOn(db, 'put').mockRejectedValue(new Error('disk full'));
    await expect(ledger.claim(1, 30)).rejects.toThrow('disk full');
    await expect(ledger.advance('1:transaction:9', [2000, 2])).rejects.toThrow('disk full');
    put.mockRestore();
    expect(await ledger.claim(1, 30)).toBe(true);
    expect(await ledger.advance('1:transaction:9', [1500, 3])).toBe(true);
  });
});

describe('disk ledger expiry and undo', () => {
  const T = Date.UTC(2026, 0, 1);
  const at = (ms: number) => vi.spyOn(Date, 'now').mockReturnValue(ms);

  it('keeps a claim and a version for their whole time, and forgets each at its exact expiry, in memory and on disk', async () => {
    const dir = freshDir();
    const clock = at(T);
    try {
      const ledger = openLedger(dir);
      expect(await ledger.claim(1, 1)).toBe(true);
      expect(await ledger.advance('1:transaction:1', [1000, 1])).toBe(true);
      expect(await ledger.advanceTo('1:payout:1', 1000)).toBe(true);
      clock.mockReturnValue(T + 60_000);
      expect(await ledger.claim(1, 1)).toBe(false);
      expect(await ledger.advance('1:transaction:1', [900, 1])).toBe(false);
      expect(await ledger.advanceTo('1:payout:1', 900)).toBe(false);
      clock.mockReturnValue(T + DEDUPE_TTL_SECONDS * 1000 - 1);
      expect(await ledger.claim(1, 1)).toBe(false);
      // At its expiry to the millisecond: gone, and taken again.
      clock.mockReturnValue(T + DEDUPE_TTL_SECONDS * 1000);
      expect(await ledger.claim(1, 1)).toBe(true);
      clock.mockReturnValue(T + LAST_SEEN_TTL_SECONDS * 1000 - 1);
      expect(await ledger.advance('1:transaction:1', [900, 2])).toBe(false);
      expect(await ledger.advanceTo('1:payout:1', 900)).toBe(false);
      clock.mockReturnValue(T + LAST_SEEN_TTL_SECONDS * 1000);
      expect(await ledger.advance('1:transaction:1', [900, 3])).toBe(true);
      expect(await ledger.advanceTo('1:payout:1', 900)).toBe(true);
      await ledger.close();
    } finally {
      clock.mockRestore();
    }
  });

  it('forgets an expired record it reads, on disk too', async () => {
    const dir = freshDir();
    const clock = at(T);
    try {
      const ledger = openLedger(dir);
      await ledger.claim(1, 1);
      await ledger.claim(1, 2);
      clock.mockReturnValue(T + DEDUPE_TTL_SECONDS * 1000);
      // Read once it expired: removed from memory and disk, not only skipped.
      expect(await ledger.claim(1, 1)).toBe(true);
      await ledger.release(1, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(ledger.bytes).toBe(bytesOfClaim('c:1:2'));
      await ledger.close();
    } finally {
      clock.mockRestore();
    }
    expect(await keysOnDisk(dir)).toEqual(['c:1:2']);
  });

  it('sweeps every expired record at start, one exactly at its expiry too, from memory and disk', async () => {
    const dir = freshDir();
    const clock = at(T);
    try {
      const before = openLedger(dir);
      await before.claim(1, 1);
      clock.mockReturnValue(T + 1);
      await before.claim(1, 2);
      await before.close();
      // Claim 1 expires exactly now; 2 a millisecond later.
      clock.mockReturnValue(T + DEDUPE_TTL_SECONDS * 1000);
      const after = openLedger(dir);
      expect(after.bytes).toBe(bytesOfClaim('c:1:2'));
      await after.close();
    } finally {
      clock.mockRestore();
    }
    expect(await keysOnDisk(dir)).toEqual(['c:1:2']);
  });

  it('reads back what it kept by when each was written, not by key', async () => {
    const dir = freshDir();
    const clock = at(T);
    try {
      const before = openLedger(dir);
      // Written in an order their keys do not sort in.
      for (const [ms, id] of [[T + 10, 9], [T + 20, 5], [T + 30, 7], [T + 40, 8]] as const) {
        clock.mockReturnValue(ms);
        await before.claim(2, id);
      }
      await before.close();
      clock.mockReturnValue(T + 50);
      // Room for three: the least recently written (9) goes at once, then the next (5) for a new claim.
      const after = openLedger(dir, { maxBytes: 1600, accountMaxBytes: 1600 });
      expect(await after.claim(2, 1)).toBe(true);
      expect([await after.claim(2, 7), await after.claim(2, 8)]).toEqual([false, false]);
      expect(await after.claim(2, 9)).toBe(true);
      await after.close();
    } finally {
      clock.mockRestore();
    }
  });

  it('undoing an object\'s first advance leaves nothing of it, in memory or on disk; undoing an unknown one is nothing', async () => {
    const dir = freshDir();
    const ledger = openLedger(dir);
    await ledger.retreat('1:transaction:404', [1000, 1]);
    expect(await ledger.advance('1:transaction:3', [1000, 1])).toBe(true);
    await ledger.retreat('1:transaction:3', [1000, 1]);
    expect(ledger.bytes).toBe(0);
    await ledger.close();
    expect(await keysOnDisk(dir)).toEqual([]);
  });

  it('gives a version put back by an undo its whole time again', async () => {
    const clock = at(T);
    try {
      const ledger = openLedger(freshDir());
      await ledger.advance('1:transaction:4', [1000, 1]);
      await ledger.advance('1:transaction:4', [2000, 2]);
      await ledger.retreat('1:transaction:4', [2000, 2]);
      clock.mockReturnValue(T + LAST_SEEN_TTL_SECONDS * 1000 - 1);
      // Back at [1000, 1], still held: an older one is not news.
      expect(await ledger.advance('1:transaction:4', [900, 3])).toBe(false);
    } finally {
      clock.mockRestore();
    }
  });

  it('keeps the version it had when writing a newer one fails', async () => {
    const ledger = openLedger(freshDir());
    expect(await ledger.advance('1:transaction:8', [1000, 1])).toBe(true);
    const db = (ledger as unknown as { db: { put: (...args: unknown[]) => Promise<boolean> } }).db;
    const put = vi.spyOn(db, 'put').mockRejectedValue(new Error('disk full'));
    await expect(ledger.advance('1:transaction:8', [2000, 2])).rejects.toThrow('disk full');
    put.mockRestore();
    // Still at [1000, 1]: an older one is not news.
    expect(await ledger.advance('1:transaction:8', [900, 3])).toBe(false);
  });

  it('lets go of its file when closed', async () => {
    const ledger = DiskLedger.open(freshDir(), { maxBytes: MB, accountMaxBytes: MB });
    await ledger.close();
    await expect(ledger.claim(1, 1)).rejects.toThrow();
  });
});

/** A claim's cost as the ledger counts it (disk-ledger.ts). */
const bytesOfClaim = (key: string) => key.length + 512;

/** The keys the ledger's file holds, read by a store of its own (the ledger closed). */
async function keysOnDisk(dir: string): Promise<string[]> {
  const db = open({ path: path.join(dir, LEDGER_FILE) });
  const keys = [...db.getKeys()].map(String);
  await db.close();
  return keys;
}
