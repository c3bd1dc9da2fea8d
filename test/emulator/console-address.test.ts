/**
 * `npm start` prints the console at the same address on every start: the
 * emulator's own port, 4010, when it is free, and the same admin token, kept
 * for this user in the temporary directory, so a console left open in the
 * browser keeps working across restarts; when 4010 is taken, the banner says
 * the address moved.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { spawnMain, welcomePrinted } from '../realtime/processes.js';

const consolePrinted = (out: string) => {
  const welcome = welcomePrinted(out);
  const consoleUrl = /Console\s+(http:\/\/\S+\/_emulator\/console#token=\S+)/.exec(out)?.[1];
  const moved = /port 4010 was taken, so this address changes on every start/.test(out);
  return welcome && consoleUrl ? { ...welcome, consoleUrl, moved: String(moved) } : null;
};

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = net.createServer().once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

describe('the console address with npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-address-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function startOnce(): Promise<URL & { moved?: boolean }> {
    // TMPDIR is where the token is kept: a directory of this test's own.
    const started = await spawnMain({ LOG_LEVEL: 'warn', TMPDIR: dir }, consolePrinted);
    const url = new URL(started.found.consoleUrl!);
    const page = await fetch(url.href.replace(/#.*/, ''));
    expect(page.status).toBe(200);
    const admin = await fetch(new URL('/_emulator/pending', url), { headers: { 'x-emulator-admin-token': url.hash.replace('#token=', '') } });
    expect(admin.status).toBe(200);
    await started.stop();
    return Object.assign(url, { moved: started.found.moved === 'true' });
  }

  it('is the same on every start, on port 4010 when it is free', async () => {
    const free = await portFree(4010);
    const first = await startOnce();
    const second = await startOnce();
    expect(second.hash).toBe(first.hash);
    expect(first.hash).toMatch(/^#token=[\w-]{32}$/);
    expect(statSync(join(dir, `payments-gateway-emulator-${process.getuid!()}.token`)).mode & 0o777).toBe(0o600);
    // Another process (a standalone emulator, a test elsewhere) may hold 4010: then any free port.
    if (free && (await portFree(4010))) {
      expect(first.port).toBe('4010');
      expect(second.href).toBe(first.href);
    }
    for (const start of [first, second]) expect(start.moved, start.port).toBe(start.port !== '4010');
  }, 60_000);

  it('moves to a free port when 4010 is taken, and the banner says so', async () => {
    // Held here, or already held by another process: taken either way.
    // Held by this test for the whole start: another suite's process may hold 4010 now and free it a moment later.
    const holder = net.createServer();
    await vi.waitFor(
      () =>
        new Promise<void>((resolve, reject) => {
          holder.once('error', reject).listen(4010, '127.0.0.1', () => resolve());
        }),
      { timeout: 30_000, interval: 200 },
    );
    try {
      const moved = await startOnce();
      expect(moved.port).not.toBe('4010');
      expect(moved.moved).toBe(true);
    } finally {
      await new Promise((resolve) => (holder.listening ? holder.close(resolve) : resolve(undefined)));
    }
  }, 60_000);
});
