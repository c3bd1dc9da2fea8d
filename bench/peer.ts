/**
 * `npm run bench -- peer`: the gateway beside the hand-written alternative
 * (bench/peer/server.ts: Apollo Server + @apollo/datasource-rest), in one
 * run, on the same emulator with the same latency. Each server runs in a
 * child process of its own and only its CPU is counted (utime + stime from
 * /proc/<pid>/stat); the emulator runs in another, the client here.
 *
 * Five servers: the peer; the gateway with its entity cache off and the
 * currency TTL at 0 ("cold": no help from any cache); the same cold gateway
 * over the node:http transport (UPSTREAM_HTTP_CLIENT=node) instead of got,
 * so one run shows what the transport alone costs; the gateway as deployed
 * ("warm": entity cache on, filled by the warm-up), over got and over
 * node:http. The 50 transactions are canceled first, so they are final and
 * may be cached.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import ts from 'typescript';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/ports.js';
import { factories } from '../test/support/factories.js';
import { startBenchEmulator, type BenchEmulator } from './emulator-process.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const KEY = 'sk_sandbox_bench_peer';
export const SEED = { customers: 10, transactions: 50 };
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const OPTIONS = {
  latency: { type: 'string', default: process.env.BENCH_LATENCY_MS ?? '5' },
  iterations: { type: 'string', default: process.env.BENCH_ITERATIONS ?? '200' },
  warmup: { type: 'string', default: process.env.BENCH_WARMUP ?? '50' },
  concurrency: { type: 'string', default: process.env.BENCH_CONCURRENCY ?? '10' },
  'concurrent-ops': { type: 'string', default: process.env.BENCH_CONCURRENT_OPS ?? '600' },
  rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '4' },
  'cpu-prof': { type: 'string' },
  'from-source': { type: 'boolean', default: false },
} as const;

interface Settings {
  latencyMs: number;
  iterations: number;
  warmup: number;
  concurrency: number;
  concurrentOps: number;
  /** The measured operations are run in this many rounds, every server taking its turn in each (see runPeerBench). */
  rounds: number;
  /** Directory for the servers' V8 CPU profiles (node --cpu-prof), written when they stop. */
  cpuProfDir: string | null;
  /** Run the TypeScript sources under tsx, as `npm start` does, rather than the built JavaScript. */
  fromSource: boolean;
}

function readSettings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: Exclude<keyof typeof OPTIONS, 'cpu-prof' | 'from-source'>, min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return Math.floor(value);
  };
  return { latencyMs: num('latency', 0), iterations: num('iterations', 1), warmup: num('warmup', 0), concurrency: num('concurrency', 1), concurrentOps: num('concurrent-ops', 1), rounds: num('rounds', 1), cpuProfDir: values['cpu-prof'] ?? null, fromSource: values['from-source'] };
}

export const peerBench: Bench = {
  name: 'peer',
  summary: 'the gateway beside a hand-written Apollo Server + @apollo/datasource-rest, each in its own process: calls, CPU, req/s, p50/p99',
  usage: [
    '--latency <ms>         injected emulator latency per request (env BENCH_LATENCY_MS, default 5)',
    '--iterations <n>       measured iterations per operation at concurrency 1 (env BENCH_ITERATIONS, default 200)',
    '--warmup <n>           unmeasured iterations first, at least one per transaction: they fill the warm cache (env BENCH_WARMUP, default 50)',
    '--concurrency <c>      workers of the throughput run (env BENCH_CONCURRENCY, default 10)',
    '--concurrent-ops <n>   operations of the throughput run (env BENCH_CONCURRENT_OPS, default 600)',
    '--rounds <n>           split both runs into this many rounds, the servers taking turns in each, so the machine\'s drift falls on all alike (env BENCH_ROUNDS, default 4)',
    '--cpu-prof <dir>       write each server\'s V8 CPU profiles under <dir>/<server>/ (summarise the largest: npx tsx bench/profile-summary.ts <file>)',
    '--from-source          run the gateways and the peer from their TypeScript under tsx, as `npm start` does, instead of built JavaScript on plain node as the Dockerfile does',
  ],
  run: async (argv) => runPeerBench(readSettings(argv)),
};

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  /** CPU ms (user + system) the process has used so far. */
  cpuMs(): number;
  /** The same, of its main thread only: the rest is V8's helper threads (GC, compilation) and libuv's pool. */
  mainThreadCpuMs(): number;
}

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || '100');

/** `/proc/<pid>/stat`, or a thread's `/proc/<pid>/task/<tid>/stat`. */
function cpuOf(statPath: string): number {
  // Fields after the command name (which may hold spaces): utime and stime are fields 14 and 15.
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}


/** The process's peak resident set so far (`VmHWM` in `/proc/<pid>/status`), in MB. */
function peakRssMb(pid: number | undefined): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'));
  return Number(line?.replace(/\D+/g, '') ?? Number.NaN) / 1024;
}

/** The V8 flags of the Dockerfile's CMD: the bench measures the gateway as deployed. */
export function gatewayNodeFlags(): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(`${ROOT}/Dockerfile`, 'utf8'))?.[1];
  return (cmd ? (JSON.parse(cmd) as string[]) : []).filter((word) => word.startsWith('--'));
}

/**
 * The servers' entry points. As deployed, by default: the gateway is `npm run build`'s
 * dist/src/main.js, which the Dockerfile runs, and the peer is transpiled the same way
 * (TypeScript to JavaScript, one file, under node_modules/.cache so it finds its packages);
 * both run on plain node, with no tsx loader on their module paths. `--from-source` runs both
 * from their TypeScript under tsx instead, as `npm start` runs the gateway.
 */
export function entryPoints(fromSource: boolean): { gateway: string; peer: string } {
  if (fromSource) return { gateway: 'src/main.ts', peer: 'bench/peer/server.ts' };
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const source = readFileSync(`${ROOT}/bench/peer/server.ts`, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const dir = `${ROOT}/node_modules/.cache/bench-peer`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/server.mjs`, outputText);
  return { gateway: 'dist/src/main.js', peer: `${dir}/server.mjs` };
}

export async function startServer(name: string, script: string, env: Record<string, string>, port: number, profDir: string | null, nodeFlags: string[] = []): Promise<Server> {
  // One directory per server: under tsx, its loader thread writes a profile of its own beside the main thread's (the larger one).
  const profile = profDir ? ['--cpu-prof', '--cpu-prof-dir', `${profDir}/${name.replace(/\W+/g, '-').replace(/-$/, '')}`] : [];
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeFlags, ...profile, ...loader, script], {
    cwd: ROOT,
    // As deployed unless `env` says otherwise: graphql-js, for one, skips its development-only checks in production.
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}/${script.includes('peer') ? '' : 'graphql'}`;
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode}`);
    const up = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: '{"query":"{ __typename }"}' })
      .then((r) => r.ok)
      .catch(() => false);
    if (up) break;
    if (Date.now() > until) throw new Error(`${name} did not start within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { name, url, child, cpuMs: () => cpuOf(`/proc/${child.pid}/stat`), mainThreadCpuMs: () => cpuOf(`/proc/${child.pid}/task/${child.pid}/stat`) };
}

/** One measured operation: its document, variables per iteration, and a check that its answer is whole. */
export interface Operation {
  name: string;
  query: string;
  variables(i: number): Record<string, unknown>;
  check(data: Record<string, unknown> | undefined): void;
}

/** The 50-item page with each node's customer and currency: the operation every CPU comparison starts from. */
export const PAGE_OF_50: Operation = {
  name: 'transactions(first: 50) { customer currency }',
  query: '{ transactions(first: 50) { nodes { id amount status customer { email fullName } currency { iso } } } }',
  variables: () => ({}),
  check: (data) => {
    const nodes = (data?.transactions as { nodes: { customer: { email: string } | null; currency: { iso: string } | null }[] } | undefined)?.nodes ?? [];
    if (nodes.length !== SEED.transactions || nodes.some((n) => !n.customer?.email || n.currency?.iso !== 'XOF')) throw new Error(`incomplete page: ${nodes.length} nodes`);
  },
};

export function operations(ids: number[]): Operation[] {
  return [
    PAGE_OF_50,
    {
      name: 'transaction(id) { customer currency }',
      query: 'query ($id: ID!) { transaction(id: $id) { id amount status customer { email fullName } currency { iso } } }',
      variables: (i) => ({ id: String(ids[i % ids.length]) }),
      check: (data) => {
        const t = data?.transaction as { customer: { email: string } | null; currency: { iso: string } | null } | null;
        if (!t?.customer?.email || t.currency?.iso !== 'XOF') throw new Error(`incomplete transaction: ${JSON.stringify(data)}`);
      },
    },
  ];
}

interface Row {
  server: string;
  op: string;
  callsPerOp: number;
  cpuMsPerOp: number;
  /** Of cpuMsPerOp, what the process's other threads used (mostly the garbage collector's helpers). */
  offMainMsPerOp: number;
  cpuMsPerOpConcurrent: number;
  reqPerSec: number;
  p50: number;
  p99: number;
}

type Client = ReturnType<typeof createJsonClient>;

async function issue(client: Client, server: Server, op: Operation, i: number): Promise<number> {
  const res = await client.post<{ data?: Record<string, unknown>; errors?: unknown[] }>(server.url, { query: op.query, variables: op.variables(i) }, { authorization: `Bearer ${KEY}` });
  if (res.status !== 200 || res.body.errors) throw new Error(`${server.name}: ${op.name}: ${res.status} ${JSON.stringify(res.body.errors)}`);
  op.check(res.body.data);
  return res.ms;
}

/** What one server did for one operation, summed over the rounds. */
interface Tally {
  /** Operations sent so far (also the index that picks each operation's variables). */
  sent: number;
  ops: number;
  cpuMs: number;
  mainThreadCpuMs: number;
  calls: number;
  samples: number[];
  loadOps: number;
  loadCpuMs: number;
  loadMs: number;
}

const newTally = (): Tally => ({ sent: 0, ops: 0, cpuMs: 0, mainThreadCpuMs: 0, calls: 0, samples: [], loadOps: 0, loadCpuMs: 0, loadMs: 0 });

/** The warm-up reads every transaction once, so a warm cache holds them all. */
async function warmUp(server: Server, op: Operation, client: Client, s: Settings, tally: Tally): Promise<void> {
  for (let i = 0; i < Math.max(s.warmup, SEED.transactions); i++) await issue(client, server, op, tally.sent++);
}

/** `n` operations one after another: CPU, upstream calls and each one's latency. */
async function sequential(server: Server, op: Operation, emulator: BenchEmulator, client: Client, n: number, tally: Tally): Promise<void> {
  await emulator.resetStats();
  const cpuBefore = server.cpuMs();
  const mainBefore = server.mainThreadCpuMs();
  for (let i = 0; i < n; i++) tally.samples.push(await issue(client, server, op, tally.sent++));
  tally.cpuMs += server.cpuMs() - cpuBefore;
  tally.mainThreadCpuMs += server.mainThreadCpuMs() - mainBefore;
  tally.calls += (await emulator.stats()).total;
  tally.ops += n;
}

/** Throughput: `concurrency` workers share `n` operations. */
async function concurrent(server: Server, op: Operation, client: Client, s: Settings, n: number, tally: Tally): Promise<void> {
  let done = 0;
  const cpuBefore = server.cpuMs();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: s.concurrency }, async () => {
      while (done < n) {
        done++;
        await issue(client, server, op, tally.sent++);
      }
    }),
  );
  tally.loadMs += performance.now() - started;
  tally.loadCpuMs += server.cpuMs() - cpuBefore;
  tally.loadOps += n;
}

function rowOf(server: Server, op: Operation, t: Tally): Row {
  const cpuMsPerOp = t.cpuMs / t.ops;
  return {
    server: server.name,
    op: op.name,
    callsPerOp: t.calls / t.ops,
    cpuMsPerOp,
    offMainMsPerOp: cpuMsPerOp - t.mainThreadCpuMs / t.ops,
    cpuMsPerOpConcurrent: t.loadCpuMs / t.loadOps,
    reqPerSec: (t.loadOps / t.loadMs) * 1000,
    p50: percentile(t.samples, 50),
    p99: percentile(t.samples, 99),
  };
}

/**
 * One operation on every server. Each server warms up first; then the
 * measured operations run in rounds, every server taking its turn in each
 * round and the order turning by one from round to round, so that a change in
 * the machine's load falls on every server alike instead of on whichever ran
 * at that moment. Sequential rounds first (CPU, calls, latency), then the
 * throughput rounds.
 */
async function measureAll(servers: Server[], op: Operation, emulator: BenchEmulator, client: Client, s: Settings): Promise<Row[]> {
  const tallies = new Map(servers.map((server) => [server, newTally()]));
  for (const server of servers) await warmUp(server, op, client, s, tallies.get(server)!);
  const share = (total: number, round: number) => Math.floor((total * (round + 1)) / s.rounds) - Math.floor((total * round) / s.rounds);
  const turns = (round: number) => servers.map((_, i) => servers[(i + round) % servers.length]!);
  for (let round = 0; round < s.rounds; round++) {
    for (const server of turns(round)) {
      const n = share(s.iterations, round);
      if (n > 0) await sequential(server, op, emulator, client, n, tallies.get(server)!);
    }
  }
  for (let round = 0; round < s.rounds; round++) {
    for (const server of turns(round)) {
      const n = share(s.concurrentOps, round);
      if (n > 0) await concurrent(server, op, client, s, n, tallies.get(server)!);
    }
  }
  return servers.map((server) => rowOf(server, op, tallies.get(server)!));
}

/** The benches' account under `key`: SEED's customers, and its transactions spread over them, canceled (final); their ids. */
export async function seed(emulator: BenchEmulator, key = KEY): Promise<number[]> {
  const make = factories(emulator, key);
  const customers: number[] = [];
  for (let i = 0; i < SEED.customers; i++) customers.push((await make.customer()).id);
  const ids: number[] = [];
  for (let i = 0; i < SEED.transactions; i++) {
    const t = await make.transaction({ amount: 1000 + i, customer: { id: customers[i % customers.length] } });
    // Final, so a warm gateway, or a router's cache, may keep it.
    await make.rest('PUT', `/v1/transactions/${t.id}`, { status: 'canceled' });
    ids.push(t.id);
  }
  return ids;
}

export const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const ratio = (a: number, b: number) => (b > 0 ? `${fixed(a / b)}` : a > 0 ? '∞' : '-');

async function runPeerBench(s: Settings): Promise<void> {
  const emulator = await startBenchEmulator({ latencyMs: s.latencyMs, separateProcess: true });
  const servers: Server[] = [];
  const client = createJsonClient(Math.max(1, s.concurrency));
  try {
    const ids = await seed(emulator);
    const gateway = (port: number, env: Record<string, string>) => ({
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      PAYMENTS_API_URL: emulator.url,
      // One key sends every operation: the per-key rate limit would measure itself.
      RATE_LIMIT_PER_MINUTE: '0',
    });
    const [p1, p2, p3, p4, p5] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const cold = { ENTITY_CACHE: 'false', CURRENCY_CACHE_TTL_MS: '0' };
    const entry = entryPoints(s.fromSource);
    servers.push(await startServer('peer (datasource-rest)', entry.peer, { PEER_PORT: String(p1), PAYMENTS_API_URL: emulator.url }, p1, s.cpuProfDir));
    servers.push(await startServer('gateway, cold (no cache)', entry.gateway, gateway(p2, cold), p2, s.cpuProfDir, gatewayNodeFlags()));
    servers.push(await startServer('gateway, cold, node transport', entry.gateway, gateway(p4, { ...cold, UPSTREAM_HTTP_CLIENT: 'node' }), p4, s.cpuProfDir, gatewayNodeFlags()));
    servers.push(await startServer('gateway, warm (entity cache)', entry.gateway, gateway(p3, {}), p3, s.cpuProfDir, gatewayNodeFlags()));
    servers.push(await startServer('gateway, warm, node transport', entry.gateway, gateway(p5, { UPSTREAM_HTTP_CLIENT: 'node' }), p5, s.cpuProfDir, gatewayNodeFlags()));

    console.log('# peer bench: the gateway beside the hand-written alternative');
    console.log(machineLine());
    console.log(codeLine());
    console.log(`the gateways run with ${gatewayNodeFlags().join(' ') || 'no V8 flags'}, as the Dockerfile runs it; the peer with Node's defaults`);
    console.log(s.fromSource ? 'gateways and peer from their TypeScript under tsx, as `npm start` runs the gateway' : `gateways from ${entry.gateway} (npm run build), as the Dockerfile runs it; the peer transpiled the same way; both on plain node`);
    console.log(`L = ${s.latencyMs} ms per upstream request; ${s.warmup} warm-up + ${s.iterations} iterations at concurrency 1, then ${s.concurrentOps} operations at concurrency ${s.concurrency}; each run in ${s.rounds} rounds, the servers taking turns in each`);
    console.log(`seed: ${SEED.customers} customers, ${SEED.transactions} canceled (final) transactions spread over them; one sandbox key`);
    console.log('each server and the emulator in its own process; CPU = utime + stime of the serving process only, all its threads; "off the main thread" is what its other threads used (the garbage collector\'s helpers, mostly)');
    console.log(`before: ${loadLine()}\n`);

    const rows: Row[] = [];
    for (const op of operations(ids)) rows.push(...(await measureAll(servers, op, emulator, client, s)));

    console.log(
      markdownTable(
        ['operation', 'server', 'upstream calls/op', 'CPU ms/op (c=1)', 'of which off the main thread', `CPU ms/op (c=${s.concurrency})`, `req/s (c=${s.concurrency})`, 'p50 ms', 'p99 ms'],
        rows.map((r) => [r.op, r.server, fixed(r.callsPerOp), fixed(r.cpuMsPerOp), fixed(r.offMainMsPerOp), fixed(r.cpuMsPerOpConcurrent), fixed(r.reqPerSec, 0), ms(r.p50), ms(r.p99)]),
      ),
    );
    console.log('\nratios, gateway / peer (calls and CPU: lower is better; req/s: higher is better):\n');
    const ratioRows: string[][] = [];
    for (const op of operations(ids)) {
      const peer = rows.find((r) => r.op === op.name && r.server.startsWith('peer'))!;
      for (const r of rows.filter((x) => x.op === op.name && x !== peer)) {
        ratioRows.push([op.name, r.server, ratio(r.callsPerOp, peer.callsPerOp), ratio(r.cpuMsPerOp, peer.cpuMsPerOp), ratio(r.cpuMsPerOpConcurrent, peer.cpuMsPerOpConcurrent), ratio(r.reqPerSec, peer.reqPerSec), ratio(r.p50, peer.p50)]);
      }
    }
    console.log(markdownTable(['operation', 'gateway', 'calls', 'CPU (c=1)', `CPU (c=${s.concurrency})`, 'req/s', 'p50'], ratioRows));
    console.log('\nthe transport alone, cold gateway over node:http / over got:\n');
    const transportRows: string[][] = [];
    for (const op of operations(ids)) {
      const viaGot = rows.find((r) => r.op === op.name && r.server === 'gateway, cold (no cache)')!;
      const viaNode = rows.find((r) => r.op === op.name && r.server === 'gateway, cold, node transport')!;
      transportRows.push([op.name, ratio(viaNode.callsPerOp, viaGot.callsPerOp), ratio(viaNode.cpuMsPerOp, viaGot.cpuMsPerOp), ratio(viaNode.cpuMsPerOpConcurrent, viaGot.cpuMsPerOpConcurrent), ratio(viaNode.reqPerSec, viaGot.reqPerSec), ratio(viaNode.p50, viaGot.p50)]);
    }
    console.log(markdownTable(['operation', 'calls', 'CPU (c=1)', `CPU (c=${s.concurrency})`, 'req/s', 'p50'], transportRows));
    console.log('\npeak resident memory of each serving process over the whole run (VmHWM):\n');
    console.log(markdownTable(['server', 'peak RSS MB'], servers.map((server) => [server.name, fixed(peakRssMb(server.child.pid))])));
    console.log(`\nafter: ${loadLine()}`);
  } finally {
    client.close();
    // Wait for the exits: a CPU profile is written as its process ends.
    await Promise.all(servers.map((server) => new Promise((resolve) => {
      if (server.child.exitCode !== null) return resolve(undefined);
      server.child.once('exit', resolve);
      server.child.kill('SIGTERM');
    })));
    await emulator.stop();
  }
}
