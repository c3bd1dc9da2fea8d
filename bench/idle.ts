/**
 * `npm run bench -- idle`: what a gateway with nothing in flight holds, beside the
 * hand-written peer (bench/peer/server.ts), in one run. Each server runs in a child
 * process of its own over one emulator (another child): the peer on Node's defaults;
 * the production build (`npm run build`, then `node dist/src/main.js`) on Node's
 * defaults and with the Dockerfile's V8 flags; with `--npm-start`, also `npm start`
 * (tsx, its embedded emulator, development settings).
 *
 * Readings: once settled after start, then after a warm-up (a few operations of the
 * peer bench's two, each answer checked) and another settle. RSS, and of it the
 * anonymous part (heap, stacks, malloc) and the file-backed part (the node binary's
 * pages, shared with every other node process), from /proc/<pid>/status; the V8 heap
 * from bench/idle-probe.mjs, preloaded into each server, which answers SIGUSR2.
 * `--snapshot <dir>` writes each server's heap snapshot after the last reading
 * (summarise one: `npx tsx bench/heap-by-module.ts <file>`).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/ports.js';
import { startBenchEmulator } from './emulator-process.js';
import { entryPoints, fixed, gatewayNodeFlags, operations, seed, startServer, type Server } from './peer.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, type Bench } from './support.js';

const KEY = 'sk_sandbox_bench_peer';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROBE = pathToFileURL(path.join(ROOT, 'bench/idle-probe.mjs')).href;
const MB = 1024 * 1024;

const OPTIONS = {
  settle: { type: 'string', default: process.env.BENCH_IDLE_SETTLE_S ?? '10' },
  warmup: { type: 'string', default: process.env.BENCH_WARMUP ?? '10' },
  'npm-start': { type: 'boolean', default: false },
  snapshot: { type: 'string' },
} as const;

interface Settings {
  settleS: number;
  warmup: number;
  npmStart: boolean;
  snapshotDir: string | null;
}

function readSettings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: 'settle' | 'warmup', min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return Math.floor(value);
  };
  return { settleS: num('settle', 1), warmup: num('warmup', 1), npmStart: values['npm-start'], snapshotDir: values.snapshot ?? null };
}

export const idleBench: Bench = {
  name: 'idle',
  summary: 'idle memory of the production build beside the hand-written peer, each in its own process: RSS, heap, the ratio',
  usage: [
    '--settle <s>           seconds each reading waits for the servers to go quiet (env BENCH_IDLE_SETTLE_S, default 10)',
    '--warmup <n>           operations of each kind per server between the two readings (env BENCH_WARMUP, default 10)',
    '--npm-start            also measure `npm start` (tsx, the embedded emulator, development settings); it is not warmed up',
    '--snapshot <dir>       write each server\'s heap snapshot under <dir> after the last reading',
  ],
  run: async (argv) => runIdleBench(readSettings(argv)),
};

/** The V8 flags of `npm start`, before its `--import tsx`. */
function startScriptFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => /^--max-/.test(word));
}

interface Reading {
  rssMb: number;
  anonMb: number;
  fileMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  newSpaceMb: number;
  externalMb: number;
}

function statusKb(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Number(line?.replace(/\D+/g, '') ?? Number.NaN);
}

/** Asks the probe for the process's heap figures (and a snapshot when `snapshotTo` is given), then reads its RSS. */
async function read(server: Server, probeDir: string, snapshotTo: string | null): Promise<Reading> {
  const pid = server.child.pid!;
  rmSync(`${probeDir}/${pid}.done`, { force: true });
  if (snapshotTo) writeFileSync(`${probeDir}/${pid}.snapshot`, '');
  // RSS first: the probe's own work (and a snapshot's) would show in it.
  const rssKb = statusKb(pid, 'VmRSS');
  const anonKb = statusKb(pid, 'RssAnon');
  const fileKb = statusKb(pid, 'RssFile');
  server.child.kill('SIGUSR2');
  const until = Date.now() + 120_000;
  while (!existsSync(`${probeDir}/${pid}.done`)) {
    if (Date.now() > until) throw new Error(`${server.name}: no answer from the memory probe`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const usage = JSON.parse(readFileSync(`${probeDir}/${pid}.json`, 'utf8')) as NodeJS.MemoryUsage & { spaces: Record<string, { committed: number }> };
  if (snapshotTo) {
    mkdirSync(snapshotTo, { recursive: true });
    copyFileSync(`${probeDir}/${pid}.heapsnapshot`, path.join(snapshotTo, `${server.name.replace(/\W+/g, '-').replace(/-$/, '')}.heapsnapshot`));
  }
  return {
    rssMb: rssKb / 1024,
    anonMb: anonKb / 1024,
    fileMb: fileKb / 1024,
    heapUsedMb: usage.heapUsed / MB,
    heapTotalMb: usage.heapTotal / MB,
    newSpaceMb: (usage.spaces.new_space?.committed ?? 0) / MB,
    externalMb: usage.external / MB,
  };
}

const quiet = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

async function runIdleBench(s: Settings): Promise<void> {
  const emulator = await startBenchEmulator({ latencyMs: 0, separateProcess: true });
  const probeDir = mkdtempSync(path.join(os.tmpdir(), 'idle-bench-'));
  const servers: { server: Server; warm: boolean; flags: string }[] = [];
  const client = createJsonClient(1);
  try {
    const ids = await seed(emulator);
    const probe = ['--import', PROBE];
    const common = { IDLE_PROBE_DIR: probeDir };
    const gateway = (port: number) => ({ ...common, PORT: String(port), HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, RATE_LIMIT_PER_MINUTE: '0' });
    const entry = entryPoints(false);
    const add = async (name: string, script: string, env: Record<string, string>, port: number, flags: string[], warm = true) => {
      servers.push({ server: await startServer(name, script, env, port, null, [...flags, ...probe]), warm, flags: flags.join(' ') || "Node's defaults" });
    };
    const [p1, p2, p3, p4, p5] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    await add('peer (datasource-rest)', entry.peer, { ...common, PEER_PORT: String(p1), PAYMENTS_API_URL: emulator.url }, p1, []);
    await add('gateway, production build', entry.gateway, gateway(p2), p2, []);
    const docker = gatewayNodeFlags();
    if (docker.length) await add('gateway, production build, Dockerfile flags', entry.gateway, gateway(p3), p3, docker);
    if (s.npmStart) {
      // As `npm start` runs it: its own flags, tsx, the embedded emulator, development settings.
      await add('gateway, npm start', 'src/main.ts', { ...common, PORT: String(p4), HOST: '127.0.0.1', EMULATOR_PORT: String(p5), NODE_ENV: 'development' }, p4, startScriptFlags(), false);
    }

    console.log('# idle bench: memory of a gateway with nothing in flight, beside the hand-written peer');
    console.log(machineLine());
    console.log(codeLine());
    console.log(`each server in its own process over one emulator (another); readings after ${s.settleS} s of quiet, at start and after ${s.warmup} warm-up operations of each of the peer bench's two kinds`);
    console.log(`before: ${loadLine()}\n`);

    await quiet(s.settleS);
    const started = new Map<Server, Reading>();
    for (const { server } of servers) started.set(server, await read(server, probeDir, null));

    const ops = operations(ids);
    for (const { server, warm } of servers) {
      if (!warm) continue;
      for (const op of ops) {
        for (let i = 0; i < s.warmup; i++) {
          const res = await client.post<{ data?: Record<string, unknown>; errors?: unknown[] }>(server.url, { query: op.query, variables: op.variables(i) }, { authorization: `Bearer ${KEY}` });
          if (res.status !== 200 || res.body.errors) throw new Error(`${server.name}: ${op.name}: ${res.status} ${JSON.stringify(res.body.errors)}`);
          op.check(res.body.data);
        }
      }
    }
    await quiet(s.settleS);
    const warmed = new Map<Server, Reading>();
    for (const { server } of servers) warmed.set(server, await read(server, probeDir, s.snapshotDir));

    const rows: string[][] = [];
    for (const { server, flags, warm } of servers) {
      for (const [when, reading] of [['started', started.get(server)!], [warm ? 'warmed up' : 'later (not warmed)', warmed.get(server)!]] as const) {
        rows.push([server.name, flags, when, fixed(reading.rssMb, 1), fixed(reading.anonMb, 1), fixed(reading.fileMb, 1), fixed(reading.heapUsedMb, 1), fixed(reading.heapTotalMb, 1), fixed(reading.newSpaceMb, 1), fixed(reading.externalMb, 1)]);
      }
    }
    console.log(markdownTable(['server', 'V8 flags', 'when', 'RSS MB', 'anon MB', 'file MB', 'heap used MB', 'heap committed MB', 'of it young gen MB', 'external MB'], rows));

    const peer = servers[0]!.server;
    console.log('\nratios, gateway / peer:\n');
    const ratioRows = servers.slice(1).map(({ server }) => [
      server.name,
      fixed(started.get(server)!.rssMb / started.get(peer)!.rssMb),
      fixed(warmed.get(server)!.rssMb / warmed.get(peer)!.rssMb),
      fixed(warmed.get(server)!.anonMb / warmed.get(peer)!.anonMb),
      fixed(warmed.get(server)!.heapUsedMb / warmed.get(peer)!.heapUsedMb),
    ]);
    console.log(markdownTable(['gateway', 'RSS, started', 'RSS, warmed up', 'anon, warmed up', 'heap used, warmed up'], ratioRows));
    console.log(`\nafter: ${loadLine()}`);
  } finally {
    client.close();
    await Promise.all(servers.map(({ server }) => new Promise((resolve) => {
      if (server.child.exitCode !== null) return resolve(undefined);
      server.child.once('exit', resolve);
      server.child.kill('SIGTERM');
    })));
    await emulator.stop();
    rmSync(probeDir, { recursive: true, force: true });
  }
}
