/**
 * `npm run bench -- pages`: one tenant's huge pages and another tenant's small reads. Heavy keys each
 * read pages of 60 to 100 MB (metadata-heavy transactions, one page in flight per key) while a
 * bystander reads a 5-row list every few milliseconds; the bystander's latency alone and under the
 * flood, side by side in one run, over two upstreams: a fast one (bench/pages-upstream.ts, a process
 * answering from bytes recorded beforehand: the gateway's own work) and the emulator in a process of
 * its own serving the pages. The gateway runs in this process, as the other in-process benches run it,
 * so its event loop's longest stalls under the flood are read here too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startGateway } from '../src/server/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { freePort } from '../test/support/ports.js';
import { startBenchEmulator, type BenchEmulator } from './emulator-process.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BYSTANDER = 'sk_sandbox_bench_pages_bystander';
const heavyKey = (i: number) => `sk_sandbox_bench_pages_heavy${i}_key`;
/** Rows of each heavy key's page: with 0.9 MB rows, pages of about 90, 75 and 60 MB. */
const HEAVY_ROWS = [100, 83, 67];
const MB = 1024 * 1024;

const OPTIONS = {
  heavy: { type: 'string', default: '3' },
  'row-kb': { type: 'string', default: '900' },
  window: { type: 'string', default: process.env.BENCH_PAGES_WINDOW_S ?? '15' },
  interval: { type: 'string', default: '20' },
  upstreams: { type: 'string', default: 'fast,emulator' },
} as const;

interface Settings {
  heavy: number;
  rowKb: number;
  windowMs: number;
  intervalMs: number;
  upstreams: ('fast' | 'emulator')[];
}

function readSettings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: keyof typeof OPTIONS, min: number, max = Infinity) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number from ${min}${max === Infinity ? '' : ` to ${max}`}`);
    return value;
  };
  const upstreams = values.upstreams.split(',').map((u) => u.trim());
  if (upstreams.length === 0 || !upstreams.every((u): u is 'fast' | 'emulator' => u === 'fast' || u === 'emulator')) throw new Error('--upstreams must list fast, emulator or both, comma-separated');
  return { heavy: Math.floor(num('heavy', 1, HEAVY_ROWS.length)), rowKb: Math.floor(num('row-kb', 1, 1000)), windowMs: num('window', 1) * 1000, intervalMs: num('interval', 0), upstreams };
}

export const pagesBench: Bench = {
  name: 'pages',
  summary: "a bystander's 5-row reads alone and while heavy keys read 60 to 100 MB pages, over a fast upstream and over the emulator",
  usage: [
    `--heavy <n>            heavy keys, 1 to ${HEAVY_ROWS.length} (default 3: pages of ${HEAVY_ROWS.join(', ')} rows)`,
    '--row-kb <kb>          metadata per heavy row, under the emulator\'s 1 MiB request body (default 900)',
    '--window <s>           seconds the bystander reads, alone and again under the flood (env BENCH_PAGES_WINDOW_S, default 15)',
    '--interval <ms>        pause between two bystander reads (default 20)',
    '--upstreams <list>     fast, emulator or both, comma-separated (default fast,emulator: side by side in one run)',
  ],
  run: async (argv) => runPagesBench(readSettings(argv)),
};

const listQuery = (first: number, fields: string) => `{ transactions(first: ${first}) { nodes { ${fields} } } }`;
type Answer = { data?: { transactions?: { nodes?: unknown[] } }; errors?: { extensions?: { code?: string } }[] };

interface Run {
  upstream: string;
  alone: number[];
  flood: number[];
  bystanderFailures: number;
  heavyPages: number;
  heavyMb: number;
  heavyErrors: Map<string, number>;
  /** The gateway process's event-loop delay under the flood (ms): p99 and max. */
  loopP99: number;
  loopMax: number;
}

async function seed(emulator: BenchEmulator, s: Settings): Promise<number[]> {
  const metadata = Object.fromEntries(Array.from({ length: s.rowKb }, (_, i) => [`line_${i}`, 'x'.repeat(1000)]));
  const create = async (key: string, custom_metadata: object) => {
    const res = await fetch(`${emulator.url}/v1/transactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 1000, currency: { iso: 'XOF' }, description: 'bench order', custom_metadata }),
    });
    if (res.status !== 201) throw new Error(`seeding: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < 5; i++) await create(BYSTANDER, { order: i });
  const sizes: number[] = [];
  for (let k = 0; k < s.heavy; k++) {
    const rows = HEAVY_ROWS[k]!;
    for (let i = 0; i < rows; i += 4) await Promise.all(Array.from({ length: Math.min(4, rows - i) }, () => create(heavyKey(k), metadata)));
    sizes.push(rows);
  }
  return sizes;
}

/** The fast upstream's bytes: each heavy key's page and the bystander's list, as the emulator answers them. */
async function record(emulator: BenchEmulator, rows: number[], dir: string): Promise<{ heavyFiles: string[]; smallFile: string; pageMb: number[] }> {
  const fetchText = async (key: string, perPage: number) => {
    const res = await fetch(`${emulator.url}/v1/transactions?per_page=${perPage}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`recording: ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const heavyFiles: string[] = [];
  const pageMb: number[] = [];
  for (let k = 0; k < rows.length; k++) {
    const page = await fetchText(heavyKey(k), rows[k]!);
    const file = path.join(dir, `heavy${k}.json`);
    writeFileSync(file, page);
    heavyFiles.push(file);
    pageMb.push(page.length / MB);
  }
  const smallFile = path.join(dir, 'small.json');
  writeFileSync(smallFile, await fetchText(BYSTANDER, 5));
  return { heavyFiles, smallFile, pageMb };
}

async function startFastUpstream(heavyFiles: string[], smallFile: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/pages-upstream.ts'], {
    cwd: ROOT,
    env: { ...process.env, PAGES_PORT: String(port), PAGES_HEAVY_FILES: heavyFiles.join(','), PAGES_SMALL_FILE: smallFile },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the fast upstream exited with code ${child.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > until) throw new Error('the fast upstream did not start within 20 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

async function measure(upstream: string, url: string, rows: number[], s: Settings): Promise<Run> {
  // The pages' path, every time: no entity cache, no rate limit in the way.
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: url, LOG_LEVEL: 'silent', ENTITY_CACHE: 'false', RATE_LIMIT_PER_MINUTE: '0' });
  const client = createUpstreamClient({ baseUrl: url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
  const gateway = await startGateway({ config, upstream: client, logger: createLogger('silent') });
  const http = createJsonClient(16);
  const ask = (key: string, query: string) => http.post<Answer>(gateway.url, { query }, { authorization: `Bearer ${key}` });
  const run: Run = { upstream, alone: [], flood: [], bystanderFailures: 0, heavyPages: 0, heavyMb: 0, heavyErrors: new Map(), loopP99: Number.NaN, loopMax: Number.NaN };
  const bystander = async (into: number[]) => {
    const until = Date.now() + s.windowMs;
    while (Date.now() < until) {
      const answer = await ask(BYSTANDER, listQuery(5, 'id status amount'));
      if (answer.status === 200 && !answer.body.errors && answer.body.data?.transactions?.nodes?.length === 5) into.push(answer.ms);
      else run.bystanderFailures++;
      if (s.intervalMs > 0) await new Promise((r) => setTimeout(r, s.intervalMs));
    }
  };
  try {
    for (let i = 0; i < 10; i++) await ask(BYSTANDER, listQuery(5, 'id status amount'));
    for (let k = 0; k < rows.length; k++) {
      const first = await ask(heavyKey(k), listQuery(rows[k]!, 'id status'));
      if (first.body.errors) throw new Error(`${upstream}: heavy key ${k}: ${JSON.stringify(first.body.errors)}`);
    }
    await bystander(run.alone);

    let flooding = true;
    const heavy = rows.map(async (perPage, k) => {
      while (flooding) {
        const answer = await ask(heavyKey(k), listQuery(perPage, 'id status'));
        const code = answer.body.errors?.[0]?.extensions?.code;
        if (code) run.heavyErrors.set(code, (run.heavyErrors.get(code) ?? 0) + 1);
        else {
          run.heavyPages++;
          run.heavyMb += perPage * s.rowKb / 1024;
        }
      }
    });
    // The flood under way (every key's first page in flight) before the bystander reads.
    await new Promise((r) => setTimeout(r, 1000));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    await bystander(run.flood);
    delay.disable();
    run.loopP99 = delay.percentile(99) / 1e6;
    run.loopMax = delay.max / 1e6;
    flooding = false;
    await Promise.all(heavy);
  } finally {
    http.close();
    await gateway.stop();
    client.close();
  }
  return run;
}

async function runPagesBench(s: Settings): Promise<void> {
  const emulator = await startBenchEmulator({ latencyMs: 0, separateProcess: true });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pages-bench-'));
  let fast: Awaited<ReturnType<typeof startFastUpstream>> | undefined;
  try {
    console.log('# pages bench: a bystander\'s 5-row reads alone and while heavy keys read huge pages');
    console.log(machineLine());
    console.log(codeLine());
    const rows = await seed(emulator, s);
    const recorded = await record(emulator, rows, dir);
    console.log(`heavy keys: ${rows.length}, pages of ${rows.join(', ')} rows (${recorded.pageMb.map((m) => m.toFixed(0)).join(', ')} MB), one page in flight per key; bystander: 5 rows every ${s.intervalMs} ms for ${s.windowMs / 1000} s alone, then as long under the flood`);
    console.log('the gateway in this process (no entity cache); each upstream in a process of its own');
    console.log(`before: ${loadLine()}\n`);
    const runs: Run[] = [];
    for (const upstream of s.upstreams) {
      if (upstream === 'fast') {
        fast = await startFastUpstream(recorded.heavyFiles, recorded.smallFile);
        runs.push(await measure('fast (recorded bytes)', fast.url, rows, s));
      } else runs.push(await measure('emulator', emulator.url, rows, s));
    }
    const table = runs.map((r) => {
      const p50 = [percentile(r.alone, 50), percentile(r.flood, 50)] as const;
      const p99 = [percentile(r.alone, 99), percentile(r.flood, 99)] as const;
      const errors = [...r.heavyErrors].map(([code, n]) => `${code} ${n}`).join(', ') || 'none';
      return [r.upstream, ms(p50[0]), ms(p50[1]), `${(p50[1] / p50[0]).toFixed(1)}x`, ms(p99[0]), ms(p99[1]), `${(p99[1] / p99[0]).toFixed(1)}x`, `${r.alone.length} / ${r.flood.length}`, String(r.bystanderFailures), `${r.heavyPages} (${r.heavyMb.toFixed(0)} MB)`, errors, `${ms(r.loopP99)} / ${ms(r.loopMax)}`];
    });
    console.log(markdownTable(['upstream', 'p50 alone', 'p50 flood', 'p50 ratio', 'p99 alone', 'p99 flood', 'p99 ratio', 'reads alone / flood', 'bystander failures', 'heavy pages read', 'heavy errors', 'loop delay p99 / max (flood)'], table));
    console.log(`\nafter: ${loadLine()}`);
  } finally {
    await fast?.stop();
    await emulator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
