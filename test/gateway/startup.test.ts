import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `src/main.ts` as `npm start` does and collects its output and exit code. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('start-up configuration', () => {
  it('exits non-zero naming every bad variable, without echoing values', async () => {
    const { code, output } = await runMain({
      PORT: 'eighty',
      PAYMENTS_ENV: 'production',
      PAYMENTS_API_URL: 'not a url sk_live_secret',
      LOG_LEVEL: 'chatty',
    });
    expect(code).toBe(1);
    for (const name of ['PORT', 'PAYMENTS_ENV', 'PAYMENTS_API_URL', 'LOG_LEVEL']) expect(output).toContain(`${name}:`);
    expect(output).not.toContain('sk_live_secret');
  });
});
