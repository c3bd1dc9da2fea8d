/**
 * One gateway per data folder. LMDB keeps DATA_DIR's files whole across processes, but each gateway sees only what
 * it read at start and its own writes: two sharing one folder would each take the other's retries and redeliveries
 * as new. The lock is a file made with O_EXCL naming its holder, touched while the holder runs, so one left by a
 * killed process is taken over (docs/deployment.md, The data folder).
 */
import { randomUUID } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

export const LOCK_FILE = 'gateway.lock';
/** How often the holder touches its lock. */
export const TOUCH_MS = 2_000;
/** A lock untouched this long is a dead holder's: another container's or host's, whose process cannot be asked. */
export const STALE_MS = 10_000;

/** Who holds the lock: its pid can be asked only from the same pid namespace of the same host. */
export interface Holder {
  pid: number;
  host: string;
  /** `/proc/self/ns/pid`'s target on Linux: two containers' pid 1 are told apart by it. */
  pidNamespace: string | null;
  token: string;
  since: string;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: Holder | null,
  ) {
    const who = holder ? `pid ${holder.pid} on host ${holder.host}, since ${holder.since}` : 'a process that left no name';
    super(
      `DATA_DIR ${dir} is in use by another gateway (${who}): two processes must not share one data folder, each would take the other's retries as new. ` +
        `Give each process its own DATA_DIR, or share REDIS_URL. A lock whose holder died is taken over once untouched for ${STALE_MS / 1000} s (${path.join(dir, LOCK_FILE)}).`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * Outside production, a folder DATA_DIR did not name (the default `data`) held by another gateway, as with two
 * `npm start`s side by side: the second may run with what it would keep there in memory, and says so. Named, or in
 * production (two containers on one volume), the folder is refused.
 */
export function runsWithoutFolder(error: unknown, config: { production: boolean; dataDirSet: boolean }): error is DataDirInUseError {
  return error instanceof DataDirInUseError && !config.production && !config.dataDirSet;
}

export interface DataDirLock {
  readonly file: string;
  /** Gives the folder back, unless another process took the lock since. */
  release(): void;
}

export interface LockOptions {
  touchMs?: number;
  staleMs?: number;
  /** This process as a holder; tests play another container with it. */
  self?: Omit<Holder, 'token' | 'since'>;
  /** The lock was taken from this process (removed, or replaced by hand): it no longer keeps others out. */
  onLost?: (holder: Holder | null) => void;
}

/**
 * Takes `dir`'s lock, creating `dir` if needed. A lock this host's pid namespace says is dead goes at once; any
 * other is watched: touched meanwhile, it is live and this start is refused; untouched for `staleMs`, it is taken.
 */
export async function lockDataDir(dir: string, options: LockOptions = {}): Promise<DataDirLock> {
  const touchMs = options.touchMs ?? TOUCH_MS;
  const staleMs = options.staleMs ?? STALE_MS;
  const self: Holder = { ...(options.self ?? thisProcess()), token: randomUUID(), since: new Date().toISOString() };
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  for (;;) {
    if (create(file, self)) break;
    const found = readHolder(file);
    if (found === undefined) continue;
    if (!provablyDead(found, self) && (await touchedWithin(file, staleMs, touchMs))) throw new DataDirInUseError(dir, found);
    takeOver(file, found, self.token);
  }
  let lost = false;
  const timer = setInterval(() => {
    const now = readHolder(file);
    if (now?.token === self.token) return void touch(file);
    if (!lost) options.onLost?.(now ?? null);
    lost = true;
  }, touchMs);
  timer.unref();
  return {
    file,
    release() {
      clearInterval(timer);
      if (readHolder(file)?.token === self.token) rmSync(file, { force: true });
    },
  };
}

function thisProcess(): Omit<Holder, 'token' | 'since'> {
  let pidNamespace: string | null = null;
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // Not Linux: a holder is then judged by its touches alone.
  }
  return { pid: process.pid, host: hostname(), pidNamespace };
}

/** O_EXCL: of two processes creating it at once, one succeeds. */
function create(file: string, self: Holder): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, `${JSON.stringify(self)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** `undefined`: no file (gone meanwhile); `null`: a file that names no one (its writer died before writing). */
function readHolder(file: string): Holder | null | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const holder = JSON.parse(text) as Holder;
    return typeof holder.pid === 'number' && typeof holder.token === 'string' ? holder : null;
  } catch {
    return null;
  }
}

/** Only a pid of this host's and this pid namespace can be asked; this very pid is a previous process's (a restart). */
function provablyDead(holder: Holder | null, self: Holder): boolean {
  if (!holder || holder.host !== self.host || holder.pidNamespace === null || holder.pidNamespace !== self.pidNamespace) return false;
  return holder.pid === self.pid || !alive(holder.pid);
}

/** Whether a pid of this host runs (EPERM: it exists, run by another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, run by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const mtimeOf = (file: string): number | null => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
};

/** Whether the lock shows its holder alive: touched within `staleMs`, watched until it is touched or turns stale. */
async function touchedWithin(file: string, staleMs: number, touchMs: number): Promise<boolean> {
  const first = mtimeOf(file);
  if (first === null) return false;
  for (;;) {
    const seen = mtimeOf(file);
    if (seen === null) return false;
    if (seen !== first) return true;
    if (Date.now() - seen >= staleMs) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.max(50, Math.min(touchMs / 4, staleMs - (Date.now() - seen)))));
  }
}

/**
 * Moved aside first, so of two processes taking the same stale lock, the second cannot remove the first's fresh one:
 * what it moved is checked, and put back when it is not the lock it judged.
 */
function takeOver(file: string, stale: Holder | null, token: string): void {
  const aside = `${file}.${token}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readHolder(aside);
  if (stale === null ? moved !== null : moved?.token !== stale.token) {
    try {
      linkSync(aside, file);
    } catch {
      // Another process made a lock meanwhile: it is the holder now.
    }
  }
  rmSync(aside, { force: true });
}

function touch(file: string): void {
  const now = new Date();
  try {
    utimesSync(file, now, now);
  } catch {
    // Gone meanwhile: the next round says so.
  }
}
