/**
 * What the Docker image runs: `npm run build`, then plain `node dist/src/main.js`
 * (no tsx). It serves GraphQL and the bundled explorer, and exits 0 on SIGTERM.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { welcomePrinted } from '../realtime/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the production build', () => {
  let child: ChildProcess;
  let url: string;
  let key: string;
  let output = '';

  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: ROOT });
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    for (const name of ['PAYMENTS_API_URL', 'REDIS_URL', 'EMULATOR_PORT', 'EMULATOR_FORWARD_TO', 'NODE_ENV', 'GRAPHQL_EXPLORER']) delete env[name];
    child = spawn(process.execPath, ['dist/src/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const found = await new Promise<Record<string, string>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`dist/src/main.js did not start:\n${output}`)), 20_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const welcome = welcomePrinted(output);
        if (welcome) {
          clearTimeout(timer);
          resolve(welcome);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`dist/src/main.js exited with ${code}:\n${output}`)));
    });
    ({ url, key } = found as { url: string; key: string });
  }, 90_000);

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('answers a GraphQL query over HTTP', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: '{ transactions(first: 2) { totalCount nodes { id customer { fullName } } } }' }),
    });
    const body = (await res.json()) as { data?: { transactions: { totalCount: number } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data!.transactions.totalCount).toBeGreaterThan(0);
    expect((await fetch(new URL('/healthz', url))).status).toBe(200);
  });

  it('serves the explorer and its assets from dist', async () => {
    const html = await (await fetch(url, { headers: { accept: 'text/html' } })).text();
    const script = /<script type="module" src="([^"]+)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect((await fetch(new URL(script!, url))).status).toBe(200);
  });

  it('exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('stopped');
  });
});
