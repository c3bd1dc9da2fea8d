/**
 * The emulator as `npm start` embeds it, with a console address that survives
 * restarts: the emulator's own port (4010) when it is free, else any free one,
 * and an admin token kept for this user in the temporary directory (mode 0600),
 * so a console left open in the browser goes on working after a restart.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from './index.js';
import type { EmulatorOptions } from './options.js';

/** Port 4010 when free (a standalone emulator may hold it: then any free port), on loopback. */
export async function startEmbeddedEmulator(options: EmulatorOptions, fixedPort: boolean): Promise<RunningEmulator> {
  const settings = { ...options, host: '127.0.0.1', seed: false, console: true };
  try {
    return await startEmulator(settings);
  } catch (error) {
    if (fixedPort || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startEmulator({ ...settings, port: 0 });
  }
}

/** This user's admin token for the embedded emulator, made once; a fresh one when the file cannot be used. */
export function embeddedAdminToken(directory = tmpdir()): string {
  const file = join(directory, `payments-gateway-emulator-${userInfo().uid}.token`);
  const fresh = randomBytes(24).toString('base64url');
  try {
    writeFileSync(file, fresh, { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch {
    try {
      const kept = readFileSync(file, 'utf8').trim();
      if (/^[\w-]{32}$/.test(kept)) return kept;
    } catch {
      // unreadable: fall through
    }
    return fresh;
  }
}
