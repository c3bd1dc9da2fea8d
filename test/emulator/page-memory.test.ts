/**
 * The emulator survives the pages it serves: a real emulator process on a reduced heap serves one
 * tenant's metadata-heavy pages, six at a time and twice over, and stays up and keeps answering a
 * bystander's small reads meanwhile. Its answers are streamed a row at a time and its request log keeps
 * copies of a body's start, never slices that hold a whole page; whole, the same pages ran it out of memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Room for the tenant's stored rows (with their events) and little more: six whole pages do not fit. */
const HEAP_MB = 192;
const ROWS = 40;
/** Under the emulator's 1 MiB request body: about 0.9 MB of metadata a row. */
const METADATA = Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`k${i}`, 'x'.repeat(1000)]));

describe(`the emulator on a ${HEAP_MB} MB heap, serving pages of ${ROWS} metadata-heavy rows`, () => {
  let child: ChildProcess;
  let url = '';
  let stderr = '';
  const heavyIds: number[] = [];
  const heavy = { authorization: 'Bearer sk_sandbox_heavy', 'content-type': 'application/json' };
  const bystander = { authorization: 'Bearer sk_sandbox_bystander', 'content-type': 'application/json' };

  beforeAll(async () => {
    const port = await freePort();
    child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', 'emulator/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', EMULATOR_PORT: String(port), EMULATOR_HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    url = `http://127.0.0.1:${port}`;
    const until = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null || Date.now() > until) throw new Error(`the emulator did not start:\n${stderr}`);
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const create = async (headers: Record<string, string>, custom_metadata: object) => {
      const res = await fetch(`${url}/v1/transactions`, { method: 'POST', headers, body: JSON.stringify({ amount: 1000, currency: { iso: 'XOF' }, description: 'order', custom_metadata }) });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { 'v1/transaction': { id: number } })['v1/transaction'].id;
    };
    for (let i = 0; i < ROWS; i++) heavyIds.push(await create(heavy, METADATA));
    for (let i = 0; i < 5; i++) await create(bystander, { order: i });
  }, 90_000);

  afterAll(() => {
    child.kill('SIGTERM');
  });

  it('stays up through two floods of six pages, each page whole or refused with a size code, and the bystander is served throughout', async () => {
    const page = async (): Promise<string> => {
      const res = await fetch(`${url}/v1/transactions?per_page=${ROWS}`, { headers: heavy });
      const text = await res.text();
      if (res.status === 503 && (JSON.parse(text) as { code?: string }).code === 'page_too_large') return 'refused';
      expect(res.status).toBe(200);
      expect(text.startsWith('{"v1/transactions":[{')).toBe(true);
      expect(text.endsWith(`"per_page":${ROWS},"total_pages":1,"total_count":${ROWS}}}`)).toBe(true);
      return 'whole';
    };
    const reads: number[] = [];
    let flooding = true;
    const bystanderReads = (async () => {
      while (flooding) {
        const res = await fetch(`${url}/v1/transactions?per_page=5`, { headers: bystander });
        const body = (await res.json()) as { 'v1/transactions': unknown[] };
        expect(res.status).toBe(200);
        reads.push(body['v1/transactions'].length);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const outcomes: string[] = [];
    try {
      for (let round = 0; round < 2; round++) outcomes.push(...(await Promise.all(Array.from({ length: 6 }, page))));
    } finally {
      flooding = false;
      await bystanderReads;
    }
    expect(child.exitCode, stderr).toBeNull();
    expect(outcomes.filter((o) => o === 'whole').length).toBeGreaterThan(0);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((n) => n === 5)).toBe(true);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  }, 120_000);

  it('stays up through reads of one heavy row after another: the request log keeps a copy of each answer\'s start, not the answer', async () => {
    // Each answer (0.9 MB) is sent whole; a log entry holding a slice of it would keep all of it for as long as the log.
    const one = async (i: number) => {
      const res = await fetch(`${url}/v1/transactions/${heavyIds[i % ROWS]}`, { headers: heavy });
      expect(res.status).toBe(200);
      expect((await res.text()).length).toBeGreaterThan(900_000);
    };
    for (let i = 0; i < 240; i += 4) await Promise.all([one(i), one(i + 1), one(i + 2), one(i + 3)]);
    expect(child.exitCode, stderr).toBeNull();
    const logs = await fetch(`${url}/v1/logs?per_page=1`, { headers: heavy });
    expect(logs.status).toBe(200);
    expect(await logs.text()).toContain('...[truncated]');
  }, 120_000);
});
