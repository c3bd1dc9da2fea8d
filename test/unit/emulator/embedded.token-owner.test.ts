/**
 * The owner rule of the embedded emulator's admin token file (emulator/embedded.ts), on its own inputs: the
 * file's stats and the user who reads it. Only root can give a file to another user, so the whole path over
 * such a file runs as root only (test/emulator/admin-token-file.test.ts); the rule runs as any user here.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenFileRefusal } from '../../../emulator/embedded.js';

const me = userInfo().uid;
const other = me === 65534 ? 65533 : 65534;
const stats = (uid: number, mode: number, isFile = true) => ({ uid, mode, isFile: () => isFile });

describe('the admin token file\'s owner rule', () => {
  let dir: string;
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'token-rule-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adopts a regular file of mode 0600 that the reader owns', () => {
    const file = join(dir, 'own.token');
    writeFileSync(file, 'x', { mode: 0o600 });
    chmodSync(file, 0o600);
    expect(tokenFileRefusal(lstatSync(file), me)).toBeNull();
  });

  it('refuses that same file to any other user, and never as theirs to replace', () => {
    const file = join(dir, 'someone-else.token');
    writeFileSync(file, 'x', { mode: 0o600 });
    chmodSync(file, 0o600);
    // Read as another user, this user's file is a file another user owns: the case only root could plant.
    expect(tokenFileRefusal(lstatSync(file), other)).toEqual({ why: 'another user owns it', mine: false });
  });

  it('refuses another user\'s file to root too, mode 0600 or not', () => {
    expect(tokenFileRefusal(stats(65534, 0o100600), 0)).toEqual({ why: 'another user owns it', mine: false });
    expect(tokenFileRefusal(stats(0, 0o100600), 65534)).toEqual({ why: 'another user owns it', mine: false });
    expect(tokenFileRefusal(stats(65534, 0o100644), 0)).toEqual({ why: 'another user owns it', mine: false });
  });

  it('refuses a file of the reader\'s that others may read or write, naming its mode, as the reader\'s to replace', () => {
    const file = join(dir, 'open.token');
    writeFileSync(file, 'x');
    chmodSync(file, 0o644);
    expect(tokenFileRefusal(lstatSync(file), me)).toEqual({ why: 'its mode is 644, not 600', mine: true });
    expect(tokenFileRefusal(stats(me, 0o100640), me)).toEqual({ why: 'its mode is 640, not 600', mine: true });
    expect(tokenFileRefusal(stats(me, 0o100700), me)).toEqual({ why: 'its mode is 700, not 600', mine: true });
    // Only the permission bits count: the type bits and a set-user-id bit leave a file of 0600 adopted.
    expect(tokenFileRefusal(stats(me, 0o104600), me)).toBeNull();
  });

  it('refuses what is not a regular file, saying whose it is', () => {
    const sub = join(dir, 'a-directory.token');
    mkdirSync(sub, { mode: 0o700 });
    chmodSync(sub, 0o600);
    expect(tokenFileRefusal(lstatSync(sub), me)).toEqual({ why: 'it is not a regular file', mine: true });
    expect(tokenFileRefusal(lstatSync(sub), other)).toEqual({ why: 'it is not a regular file', mine: false });
  });
});
