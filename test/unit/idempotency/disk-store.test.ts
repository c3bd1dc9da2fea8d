/** The disk store: the record contract, and what a restart finds (records kept, expired ones swept, the folder held). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DiskIdempotencyStore } from '../../../src/idempotency/disk-store.js';
import { CALLER, LOCK, recordTests, TTL } from './store.records.contract.js';

const root = mkdtempSync(path.join(tmpdir(), 'disk-store-'));
let dirs = 0;
const freshDir = () => path.join(root, `d${++dirs}`);
const opened: DiskIdempotencyStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close().catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});
const openStore = (dir: string, bounds = {}, shared?: (pid: number) => void) => {
  const store = DiskIdempotencyStore.open(dir, bounds, shared);
  opened.push(store);
  return store;
};

describe('disk idempotency records', () => {
  recordTests(() => openStore(freshDir()));
});

describe('disk idempotency store across a restart', () => {
  it('replays a completed record, keeps a running claim running, and an open key bound to its input', async () => {
    const dir = freshDir();
    const before = openStore(dir);
    const done = await before.claim('done', 'fp', LOCK, CALLER);
    const running = await before.claim('running', 'fp', LOCK, CALLER);
    const open = await before.claim('open', 'fp', LOCK, CALLER);
    if (done.kind !== 'acquired' || running.kind !== 'acquired' || open.kind !== 'acquired') throw new Error('not acquired');
    await before.complete('done', done.owner, 'fp', '{"id":7}', TTL, CALLER);
    await before.release('open', open.owner, 'fp', TTL, CALLER);
    await before.close();

    const after = openStore(dir);
    expect(await after.claim('done', 'fp', LOCK, CALLER)).toEqual({ kind: 'completed', json: '{"id":7}' });
    expect(await after.claim('running', 'fp', LOCK, CALLER)).toEqual({ kind: 'in_progress' });
    expect(await after.claim('open', 'other', LOCK, CALLER)).toEqual({ kind: 'mismatch' });
    expect(after.size).toBe(3);
  });

  it('sweeps records that expired while it was down, and counts the others against its bounds', async () => {
    const dir = freshDir();
    const before = openStore(dir);
    for (const [key, ttl] of [['short', 50], ['long', TTL]] as const) {
      const claim = await before.claim(key, 'fp', LOCK, CALLER);
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await before.complete(key, claim.owner, 'fp', '"x"', ttl, CALLER);
    }
    await before.close();
    await new Promise((r) => setTimeout(r, 100));

    const after = openStore(dir, { maxRecords: 2 });
    expect(after.size).toBe(1);
    expect((await after.peek('short', 'fp', CALLER)).kind).toBe('none');
    expect((await after.claim('new-1', 'fp', LOCK, 'other')).kind).toBe('acquired');
    // The restored record holds its place: two in all.
    expect((await after.claim('new-2', 'fp', LOCK, 'other')).kind).toBe('full');
    const db = open({ path: path.join(dir, 'idempotency.mdb') });
    const keys = [...db.getKeys()].map(String);
    await db.close();
    expect(keys.some((k) => k.endsWith('/short'))).toBe(false);
  });

  it('owners are new after a restart: the old process\'s owner cannot complete a claim taken since', async () => {
    const dir = freshDir();
    const before = openStore(dir);
    const old = await before.claim('k', 'fp', 50, CALLER);
    if (old.kind !== 'acquired') throw new Error(old.kind);
    await before.close();
    await new Promise((r) => setTimeout(r, 100));
    const after = openStore(dir);
    const fresh = await after.claim('k', 'fp', LOCK, CALLER);
    if (fresh.kind !== 'acquired') throw new Error(fresh.kind);
    expect(fresh.owner).not.toBe(old.owner);
    expect(await after.complete('k', old.owner, 'fp', '"stale"', TTL, CALLER)).toBe(false);
  });

  it('tells of a live process that holds the folder, not of one that is gone', async () => {
    const dir = freshDir();
    openStore(dir);
    const db = open<number, string>({ path: path.join(dir, 'idempotency.mdb') });
    await db.put('!holder', process.ppid);
    const told: number[] = [];
    openStore(dir, {}, (pid) => told.push(pid));
    expect(told).toEqual([process.ppid]);
    expect(db.get('!holder')).toBe(process.pid);
    // Its own pid (a container's pid 1 after a restart) is no other holder.
    openStore(dir, {}, (pid) => told.push(pid));
    expect(told).toEqual([process.ppid]);
    // A pid no process has: the holder died without closing (SIGKILL).
    await db.put('!holder', process.ppid);
    const gone = vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('no such process'), { code: 'ESRCH' });
    });
    openStore(dir, {}, (pid) => told.push(pid));
    gone.mockRestore();
    expect(told).toEqual([process.ppid]);
    // A holder run by another user is alive.
    await db.put('!holder', process.ppid);
    const denied = vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('not permitted'), { code: 'EPERM' });
    });
    openStore(dir, {}, (pid) => told.push(pid));
    denied.mockRestore();
    expect(told).toEqual([process.ppid, process.ppid]);
    // Nobody to tell: it opens all the same.
    await db.put('!holder', process.ppid);
    expect(() => openStore(dir)).not.toThrow();
    await db.close();
  });

  it('gives the folder back when it closes, unless another took it since', async () => {
    const dir = freshDir();
    const store = DiskIdempotencyStore.open(dir);
    await store.close();
    const db = open<number, string>({ path: path.join(dir, 'idempotency.mdb') });
    expect(db.get('!holder')).toBeUndefined();
    const again = DiskIdempotencyStore.open(dir);
    await db.put('!holder', process.ppid);
    await again.close();
    expect(db.get('!holder')).toBe(process.ppid);
    await db.close();
  });

  it('makes its folder and the ones above it', async () => {
    const dir = path.join(freshDir(), 'below', 'data');
    const store = openStore(dir);
    expect((await store.claim('k', 'fp', LOCK, CALLER)).kind).toBe('acquired');
  });

  it('takes off the disk a record swept from memory, without waiting for a restart', async () => {
    const dir = freshDir();
    const store = openStore(dir, { maxRecords: 1 });
    const short = await store.claim('short', 'fp', 20, CALLER);
    if (short.kind !== 'acquired') throw new Error(short.kind);
    await new Promise((r) => setTimeout(r, 50));
    // At the bound: the claim sweeps the expired one to make room.
    expect((await store.claim('next', 'fp', LOCK, CALLER)).kind).toBe('acquired');
    const db = open({ path: path.join(dir, 'idempotency.mdb') });
    const onDisk = () => [...db.getKeys()].map(String).filter((k) => k !== '!holder');
    const end = Date.now() + 2_000;
    while (onDisk().length > 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(onDisk()).toEqual([`${CALLER}/next`]);
    await db.close();
  });

  it('restores a record only while it lives: one expiring at the very millisecond of the start is swept', async () => {
    const dir = freshDir();
    const before = openStore(dir);
    const at = Date.now();
    const claim = await before.claim('edge', 'fp', 1_000, CALLER);
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const db = open<{ expiresAt: number }, string>({ path: path.join(dir, 'idempotency.mdb') });
    const expiresAt = db.get(`${CALLER}/edge`)!.expiresAt;
    await before.close();
    expect(expiresAt).toBeGreaterThanOrEqual(at + 1_000);
    const clock = vi.spyOn(Date, 'now').mockReturnValue(expiresAt);
    const after = openStore(dir);
    clock.mockRestore();
    expect(after.size).toBe(0);
    await db.close();
  });

  it('sweeps only records at its start: an entry that is none (a number under another key) stays on disk, unread', async () => {
    const dir = freshDir();
    const db = open<unknown, string>({ path: path.join(dir, 'idempotency.mdb') });
    await db.put('elsewhere', 42);
    const store = openStore(dir);
    expect(store.size).toBe(0);
    expect(db.transactionSync(() => db.get('elsewhere'))).toBe(42);
    await db.close();
  });

  it('asks after no holder in a folder nobody held', () => {
    // Whatever a probe of "no pid" would answer, there is nobody to tell of.
    const probe = vi.spyOn(process, 'kill').mockImplementation(() => true);
    const told: number[] = [];
    openStore(freshDir(), {}, (pid) => told.push(pid));
    probe.mockRestore();
    expect(told).toEqual([]);
  });
});
