/**
 * The emulator as `npm start` embeds it, with a console address that survives
 * restarts: the emulator's own port (4010) when it is free, else any free one,
 * and an admin token kept for this user in the temporary directory (mode 0600,
 * adopted only when this user alone owns and reads it), so a console left open
 * in the browser goes on working after a restart.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from './start.js';
import type { EmulatorOptions } from './options.js';

/**
 * Port 4010 when free (a standalone emulator may hold it: then any free port), on the gateway's own `host`
 * (loopback unless HOST opens both): EMULATOR_HOST is the standalone emulator's.
 */
export async function startEmbeddedEmulator(options: EmulatorOptions, fixedPort: boolean, host: string): Promise<RunningEmulator> {
  // Sandbox only: a live rehearsal is a standalone emulator (npm run emulator), never the one npm start embeds.
  const settings = { ...options, host, seed: false, console: true, liveRehearsal: false };
  try {
    return await startEmulator(settings);
  } catch (error) {
    if (fixedPort || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startEmulator({ ...settings, port: 0 });
  }
}

const TOKEN_SHAPE = /^[\w-]{32}$/;

/**
 * This user's admin token for the embedded emulator, made once and kept in the temporary directory.
 * The file is adopted only when it is a regular file (never through a symlink), owned by this user,
 * readable by no one else, and holding a token: on a shared machine another user could plant it
 * first and so drive this user's emulator. Anything else gets a fresh token, written only where
 * nothing stands (a file of this user's is replaced, never written through), and a warning.
 */
export function embeddedAdminToken(directory = tmpdir(), warn: (message: string) => void = () => {}): string {
  const file = join(directory, `payments-gateway-emulator-${userInfo().uid}.token`);
  const fresh = randomBytes(24).toString('base64url');
  if (createExclusive(file, fresh)) return fresh;
  const { token, refusal } = readOwn(file);
  if (token !== null) return token;
  // Only a file or link of this user's is removed; another user's stays, and the fresh token lives in memory.
  const replaced = refusal !== null && refusal.mine && removeQuietly(file) && createExclusive(file, fresh);
  warn(
    `The emulator's admin token file ${file} was not used (${refusal?.why ?? 'unreadable'}): a fresh token was made` +
      (replaced ? ' and written in its place.' : '; remove that file so the console address survives restarts.'),
  );
  return fresh;
}

/** Writes a new file with mode 0600, failing if anything (a file, a symlink, dangling or not) is at the path. */
function createExclusive(file: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
  } catch {
    return false;
  }
  try {
    // Exactly 0600 whatever the umask, so the next start adopts it.
    fchmodSync(fd, 0o600);
    writeSync(fd, token);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * The owner rule, on the file's own stats: why user `uid` does not adopt it (null: it does), and whether the
 * file is that user's to replace. Root is no exception: a file another user owns is theirs.
 */
export function tokenFileRefusal(stat: { isFile(): boolean; uid: number; mode: number }, uid: number): { why: string; mine: boolean } | null {
  const mine = stat.uid === uid;
  if (!stat.isFile()) return { why: 'it is not a regular file', mine };
  if (!mine) return { why: 'another user owns it', mine };
  const mode = stat.mode & 0o777;
  return mode === 0o600 ? null : { why: `its mode is ${mode.toString(8)}, not 600`, mine };
}

/** The token of a file this user alone owns and reads, opened without following a link. */
function readOwn(file: string): { token: string | null; refusal: { why: string; mine: boolean } | null } {
  const uid = process.getuid?.() ?? -1;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch (error) {
    const mine = lstatQuietly(file)?.uid === uid;
    const why = (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a symbolic link' : 'it cannot be opened';
    return { token: null, refusal: { why, mine } };
  }
  try {
    const refusal = tokenFileRefusal(fstatSync(fd), uid);
    if (refusal !== null) return { token: null, refusal };
    const kept = readFileSync(fd, 'utf8').trim();
    return TOKEN_SHAPE.test(kept) ? { token: kept, refusal: null } : { token: null, refusal: { why: 'it holds no token', mine: true } };
  } catch {
    return { token: null, refusal: { why: 'it cannot be read', mine: false } };
  } finally {
    closeSync(fd);
  }
}

// O_NOFOLLOW makes opening a symlink fail (ELOOP); O_NONBLOCK keeps a planted FIFO from blocking the open.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

function lstatQuietly(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

function removeQuietly(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}
