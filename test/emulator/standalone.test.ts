/**
 * `npm run emulator`, the emulator alone: what it prints at start is true of
 * it. It has no console page and says so, and the key it names answers.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the standalone emulator (npm run emulator)', () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'emulator/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', EMULATOR_PORT: '0', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let banner = '';
  let url = '';

  beforeAll(async () => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner:\n${banner}`)), 15_000);
      child.stdout.on('data', (d: Buffer) => {
        banner += d.toString();
        const found = /listening on (http:\/\/\S+)/.exec(banner);
        if (found && banner.includes('No console')) {
          url = found[1]!;
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${banner}`)));
    });
  }, 20_000);
  afterAll(() => {
    child.kill('SIGTERM');
  });

  it('says it has no console, and has none', async () => {
    expect(banner).toContain('No console here: the console page comes with the emulator `npm start` embeds');
    expect((await fetch(`${url}/_emulator/console`)).status).toBe(404);
  });

  it('names the demo key and says any other sandbox key is a new, empty account', async () => {
    expect(banner).toContain('Sandbox key: sk_sandbox_demo');
    expect(banner).toContain('any other sk_sandbox_<anything> key is a new, empty account');
    const res = await fetch(`${url}/v1/transactions`, { headers: { authorization: 'Bearer sk_sandbox_other' } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).not.toMatch(/"id":\s*\d/);
  });
});
