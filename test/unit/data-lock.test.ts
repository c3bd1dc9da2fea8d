/**
 * The data folder's lock: one holder at a time; a holder this pid namespace can see dead is taken over at once,
 * one elsewhere (another container, another host) only once its lock goes untouched; the lock given back on release.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir, runsWithoutFolder, type Holder } from '../../src/data-lock.js';

const root = mkdtempSync(path.join(tmpdir(), 'data-lock-'));
let dirs = 0;
const freshDir = () => path.join(root, `d${++dirs}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const holderIn = (dir: string) => JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as Holder;
/** A lock as another process left it, written `ageMs` ago. */
function plant(dir: string, holder: Partial<Holder>, ageMs = 0): void {
  const file = path.join(dir, LOCK_FILE);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify({ pid: 4242, host: 'elsewhere', pidNamespace: 'pid:[1]', token: 'theirs', since: '2026-01-01T00:00:00.000Z', ...holder }));
  const at = new Date(Date.now() - ageMs);
  utimesSync(file, at, at);
}
const fast = { touchMs: 40, staleMs: 400 };

describe('the DATA_DIR lock', () => {
  it('creates the folder, names its holder, and gives the folder back on release', async () => {
    const dir = freshDir();
    const lock = await lockDataDir(dir, fast);
    expect(holderIn(dir)).toMatchObject({ pid: process.pid, token: expect.any(String) });
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
    (await lockDataDir(dir, fast)).release();
  });

  it('refuses a second holder while the first lives, naming the folder and the holder', async () => {
    const dir = freshDir();
    const first = await lockDataDir(dir, fast);
    const refused = await lockDataDir(dir, { ...fast, self: { pid: 99_999_999, host: 'other-container', pidNamespace: 'pid:[2]' } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as Error).message).toContain(`DATA_DIR ${dir} is in use by another gateway (pid ${process.pid}`);
    // Refused at its first touch, not after the stale period.
    first.release();
  });

  it('takes over at once a lock of this pid namespace whose process is gone, or that was this very pid (a restart)', async () => {
    const dir = freshDir();
    const self = { host: 'here', pidNamespace: 'pid:[7]' };
    plant(dir, { ...self, pid: 99_999_999 });
    const started = Date.now();
    const lock = await lockDataDir(dir, { ...fast, staleMs: 60_000, self: { ...self, pid: 1 } });
    expect(holderIn(dir)).toMatchObject({ pid: 1, host: 'here' });
    lock.release();
    plant(dir, { ...self, pid: 1 });
    const again = await lockDataDir(dir, { ...fast, staleMs: 60_000, self: { ...self, pid: 1 } });
    expect(Date.now() - started).toBeLessThan(5_000);
    again.release();
  });

  it('does not judge a pid of another pid namespace: two containers\' pid 1 with one host name', async () => {
    const dir = freshDir();
    plant(dir, { pid: 1, host: 'shared', pidNamespace: 'pid:[1]' });
    const lockedByTwin = setInterval(() => {
      const now = new Date();
      utimesSync(path.join(dir, LOCK_FILE), now, now);
    }, 40);
    const refused = await lockDataDir(dir, { ...fast, self: { pid: 1, host: 'shared', pidNamespace: 'pid:[2]' } }).catch((e: unknown) => e);
    clearInterval(lockedByTwin);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect(holderIn(dir).token).toBe('theirs');
  });

  it('takes a lock from elsewhere once untouched for the stale period, not before', async () => {
    const dir = freshDir();
    plant(dir, {}, 300);
    const started = Date.now();
    const lock = await lockDataDir(dir, fast);
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
    expect(holderIn(dir).pid).toBe(process.pid);
    lock.release();
    plant(dir, {}, 60_000);
    (await lockDataDir(dir, fast)).release();
  });

  it('takes a lock that names no one (its writer died before writing) once stale', async () => {
    const dir = freshDir();
    const file = path.join(dir, LOCK_FILE);
    (await lockDataDir(dir, fast)).release();
    writeFileSync(file, '');
    const old = new Date(Date.now() - 1_000);
    utimesSync(file, old, old);
    const lock = await lockDataDir(dir, fast);
    expect(holderIn(dir).pid).toBe(process.pid);
    lock.release();
  });

  it('says so once when its lock is taken from it, and then leaves the other\'s lock alone', async () => {
    const dir = freshDir();
    const lost = vi.fn();
    const lock = await lockDataDir(dir, { ...fast, onLost: lost });
    plant(dir, {});
    await new Promise((r) => setTimeout(r, 200));
    expect(lost).toHaveBeenCalledTimes(1);
    expect(lost.mock.calls[0]![0]).toMatchObject({ token: 'theirs' });
    lock.release();
    expect(holderIn(dir).token).toBe('theirs');
  });
});

describe('a folder held by another gateway', () => {
  const inUse = new DataDirInUseError('/srv/data', null);
  it('is refused when DATA_DIR names it or in production; outside production, the default folder is run without', () => {
    expect(runsWithoutFolder(inUse, { production: false, dataDirSet: false })).toBe(true);
    expect(runsWithoutFolder(inUse, { production: false, dataDirSet: true })).toBe(false);
    expect(runsWithoutFolder(inUse, { production: true, dataDirSet: false })).toBe(false);
    // Any other failure (a folder that cannot be written) refuses the start.
    expect(runsWithoutFolder(new Error('EACCES'), { production: false, dataDirSet: false })).toBe(false);
  });
});
