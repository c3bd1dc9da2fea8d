/**
 * The embedded emulator's admin token file (emulator/embedded.ts) in a temporary directory other users
 * may write to: adopted only when it is a regular file this user alone owns and reads, never through a
 * link; anything planted there gets a fresh token, written nowhere a link points, and a warning. Also
 * `npm start` (src/main.ts as its own process) with a planted link: the warning in its log.
 */
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddedAdminToken } from '../../emulator/embedded.js';
import { spawnMain } from '../realtime/processes.js';

const PLANTED = 'planted_by_someone_else_0123456'; // 32 characters of the token's shape
const uid = userInfo().uid;

describe('the embedded emulator\'s admin token file', () => {
  let dir: string;
  let file: string;
  let warnings: string[];
  const token = () => embeddedAdminToken(dir, (m) => void warnings.push(m));
  /** The file at the path itself (not what a link points to): a regular file of this user's, mode 0600, holding `expected`. */
  const expectOwnFileHolding = (expected: string) => {
    const stat = lstatSync(file);
    expect(stat.isFile()).toBe(true);
    expect(stat.uid).toBe(uid);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(expected);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'admin-token-'));
    file = join(dir, `payments-gateway-emulator-${uid}.token`);
    warnings = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is made once, mode 0600, and adopted on the next start without a warning', () => {
    const first = token();
    expect(first).toMatch(/^[\w-]{32}$/);
    expectOwnFileHolding(first);
    expect(token()).toBe(first);
    expect(warnings).toEqual([]);
  });

  it('is never read or written through a symbolic link: a fresh token, the link replaced, its target untouched', () => {
    const target = join(dir, 'elsewhere.token');
    writeFileSync(target, PLANTED, { mode: 0o600 });
    symlinkSync(target, file);

    const fresh = token();

    expect(fresh).not.toBe(PLANTED);
    expect(readFileSync(target, 'utf8')).toBe(PLANTED);
    expectOwnFileHolding(fresh);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('symbolic link');
    expect(warnings[0]).not.toContain(fresh);
  });

  it('creates nothing where a dangling link points', () => {
    const target = join(dir, 'would-be-created.token');
    symlinkSync(target, file);
    const fresh = token();
    expect(existsSync(target)).toBe(false);
    expectOwnFileHolding(fresh);
    expect(warnings[0]).toContain('symbolic link');
  });

  it('refuses a file others may read (mode 0644): a fresh token in a fresh file of mode 0600', () => {
    writeFileSync(file, PLANTED);
    chmodSync(file, 0o644);
    const fresh = token();
    expect(fresh).not.toBe(PLANTED);
    expectOwnFileHolding(fresh);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('mode is 644');
  });

  it('refuses what is not a regular file, and keeps the fresh token in memory when it cannot be removed', () => {
    mkdirSync(file);
    const fresh = token();
    expect(fresh).toMatch(/^[\w-]{32}$/);
    expect(lstatSync(file).isDirectory()).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('not a regular file');
    expect(warnings[0]).toContain('remove that file');
  });

  // Only root can give a file to another user; the owner rule itself runs as any user in test/unit/emulator/embedded.token-owner.test.ts.
  it.runIf(uid === 0)('refuses a file another user owns, even with mode 0600 and a token in it', () => {
    writeFileSync(file, PLANTED, { mode: 0o600 });
    chownSync(file, 65534, 65534);
    const fresh = token();
    expect(fresh).not.toBe(PLANTED);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('another user owns it');
    // Never removed (another user's), never written.
    expect(lstatSync(file).uid).toBe(65534);
    expect(readFileSync(file, 'utf8')).toBe(PLANTED);
  });

  // spawnMain gives up (and stops the process) at 15 s, before the test's own time-out.
  it('npm start with a planted link: the emulator takes a fresh token and the log says why', async () => {
    const target = join(dir, 'elsewhere.token');
    writeFileSync(target, PLANTED, { mode: 0o600 });
    symlinkSync(target, file);
    const ready = (out: string) => {
      const welcomed = /#token=([\w-]+)/.exec(out)?.[1];
      return welcomed && /admin token file .* was not used \(it is a symbolic link\)/.test(out) ? { welcomed } : null;
    };
    // The embedded emulator on any free port, so a developer's `npm start` on 4010 is left alone.
    const started = await spawnMain({ TMPDIR: dir, EMULATOR_PORT: '0', LOG_LEVEL: 'warn' }, ready, 45_000);
    await started.stop();
    expect(started.found.welcomed).not.toBe(PLANTED);
    expect(readFileSync(target, 'utf8')).toBe(PLANTED);
    expectOwnFileHolding(started.found.welcomed!);
    // A whole npm start on a loaded machine: its start is waited for up to 45 s, below this test's limit.
  }, 60_000);
});
