/**
 * `npm run bench -- router-cache`: Hive Gateway in front of the gateway,
 * with and without Hive's response cache, on the peer bench's warm pages.
 * The gateway (warm: entity cache on), each Hive and the emulator run in
 * processes of their own; CPU is each serving process's utime + stime, as
 * the peer bench counts it. Three Hives over the one gateway, taking turns:
 * no response cache; the response cache with the gateway's hints honoured
 * (private per key, no-store kept out: docs/routers.md, "Hive Gateway");
 * and the response cache as it comes, which keeps no-store answers (stale
 * pages: the ceiling, not a configuration to run).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { composeSupergraph } from '../test/federation/router.js';
import { freePort } from '../test/support/ports.js';
import { toolAvailable } from '../test/support/tools.js';
import { startBenchEmulator, type BenchEmulator } from './emulator-process.js';
import { entryPoints, fixed, gatewayNodeFlags, PAGE_OF_50, seed, SEED, startServer, type Operation, type Server } from './peer.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const KEY = 'sk_sandbox_bench_router_cache';

const OPTIONS = {
  latency: { type: 'string', default: process.env.BENCH_LATENCY_MS ?? '5' },
  iterations: { type: 'string', default: process.env.BENCH_ITERATIONS ?? '200' },
  warmup: { type: 'string', default: process.env.BENCH_WARMUP ?? '50' },
  rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '4' },
  'from-source': { type: 'boolean', default: false },
} as const;

interface Settings {
  latencyMs: number;
  iterations: number;
  warmup: number;
  rounds: number;
  fromSource: boolean;
}

function readSettings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: 'latency' | 'iterations' | 'warmup' | 'rounds', min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return Math.floor(value);
  };
  return { latencyMs: num('latency', 0), iterations: num('iterations', 1), warmup: num('warmup', 0), rounds: num('rounds', 1), fromSource: values['from-source'] };
}

export const routerCacheBench: Bench = {
  name: 'router-cache',
  summary: "Hive Gateway in front of the gateway, with its response cache (the gateway's hints honoured, or not) and without: upstream calls, CPU of both processes, p50",
  usage: [
    '--latency <ms>      injected emulator latency per request (env BENCH_LATENCY_MS, default 5)',
    '--iterations <n>    measured operations per Hive and operation, at concurrency 1 (env BENCH_ITERATIONS, default 200)',
    '--warmup <n>        unmeasured operations first, at least one per transaction (env BENCH_WARMUP, default 50)',
    '--rounds <n>        split the measured operations into rounds, the Hives taking turns in each (env BENCH_ROUNDS, default 4)',
    '--from-source       run the gateway from its TypeScript under tsx instead of dist/src/main.js',
  ],
  run: async (argv) => runRouterCacheBench(readSettings(argv)),
};

function operations(ids: number[]): Operation[] {
  return [
    PAGE_OF_50,
    {
      name: 'transaction(id) { status customer currency }, final',
      query: 'query ($id: ID!) { transaction(id: $id) { id amount status customer { email fullName } currency { iso } } }',
      variables: (i) => ({ id: String(ids[i % ids.length]) }),
      check: (data) => {
        const t = data?.transaction as { status: string; customer: { email: string } | null } | null;
        if (t?.status !== 'CANCELED' || !t.customer?.email) throw new Error(`incomplete transaction: ${JSON.stringify(data)}`);
      },
    },
  ];
}

interface Tally {
  sent: number;
  ops: number;
  hiveCpuMs: number;
  gatewayCpuMs: number;
  calls: number;
  samples: number[];
}

type Client = ReturnType<typeof createJsonClient>;

async function issue(client: Client, hive: Server, op: Operation, i: number): Promise<number> {
  const res = await client.post<{ data?: Record<string, unknown>; errors?: unknown[] }>(hive.url, { query: op.query, variables: op.variables(i) }, { authorization: `Bearer ${KEY}` });
  if (res.status !== 200 || res.body.errors) throw new Error(`${hive.name}: ${op.name}: ${res.status} ${JSON.stringify(res.body.errors)}`);
  op.check(res.body.data);
  return res.ms;
}

async function measure(hives: Server[], gateway: Server, op: Operation, emulator: BenchEmulator, client: Client, s: Settings) {
  const tallies = new Map(hives.map((hive) => [hive, { sent: 0, ops: 0, hiveCpuMs: 0, gatewayCpuMs: 0, calls: 0, samples: [] } as Tally]));
  for (const hive of hives) {
    const t = tallies.get(hive)!;
    for (let i = 0; i < Math.max(s.warmup, SEED.transactions); i++) await issue(client, hive, op, t.sent++);
  }
  const share = (round: number) => Math.floor((s.iterations * (round + 1)) / s.rounds) - Math.floor((s.iterations * round) / s.rounds);
  for (let round = 0; round < s.rounds; round++) {
    for (const hive of hives.map((_, i) => hives[(i + round) % hives.length]!)) {
      const t = tallies.get(hive)!;
      const n = share(round);
      await emulator.resetStats();
      const [hiveBefore, gatewayBefore] = [hive.cpuMs(), gateway.cpuMs()];
      for (let i = 0; i < n; i++) t.samples.push(await issue(client, hive, op, t.sent++));
      t.hiveCpuMs += hive.cpuMs() - hiveBefore;
      t.gatewayCpuMs += gateway.cpuMs() - gatewayBefore;
      t.calls += (await emulator.stats()).total;
      t.ops += n;
    }
  }
  return hives.map((hive) => ({ hive: hive.name, op: op.name, ...tallies.get(hive)! }));
}

async function runRouterCacheBench(s: Settings): Promise<void> {
  if (!toolAvailable('hive-gateway')) throw new Error('Hive Gateway is not installed: npm ci --prefix test/routers');
  const emulator = await startBenchEmulator({ latencyMs: s.latencyMs, separateProcess: true });
  const servers: Server[] = [];
  const client = createJsonClient(1);
  try {
    const ids = await seed(emulator, KEY);
    const gatewayPort = await freePort();
    const entry = entryPoints(s.fromSource);
    const gateway = await startServer(
      'gateway, warm (entity cache)',
      entry.gateway,
      { PORT: String(gatewayPort), HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, RATE_LIMIT_PER_MINUTE: '0' },
      gatewayPort,
      null,
      gatewayNodeFlags(),
    );
    servers.push(gateway);
    // The committed SDL, which the federation tests check equals the served one.
    const sdl = readFileSync(new URL('../supergraph/payments.graphql', import.meta.url), 'utf8');
    const supergraphFile = join(mkdtempSync(join(tmpdir(), 'router-cache-')), 'supergraph.graphql');
    writeFileSync(supergraphFile, composeSupergraph([{ name: 'payments', url: gateway.url, sdl }]));
    const hives: Server[] = [];
    for (const [name, mode] of [
      ['Hive, no response cache', 'off'],
      ["Hive + response cache, gateway's hints honoured", 'hints'],
      ['Hive + response cache ignoring no-store (stale; ceiling only)', 'ignore-hints'],
    ] as const) {
      const port = await freePort();
      const hive = await startServer(name, 'bench/hive-process.ts', { HIVE_PORT: String(port), HIVE_SUPERGRAPH: supergraphFile, HIVE_RESPONSE_CACHE: mode }, port, null);
      hives.push(hive);
      servers.push(hive);
    }

    console.log("# router-cache bench: Hive Gateway's response cache in front of the gateway");
    console.log(machineLine());
    console.log(codeLine());
    console.log(`gateway from ${entry.gateway}, warm (entity cache on, filled by the warm-up); each Hive (@graphql-hive/gateway-runtime, test/routers) under tsx; NODE_ENV=production`);
    console.log(`L = ${s.latencyMs} ms per upstream request; ${Math.max(s.warmup, SEED.transactions)} warm-up + ${s.iterations} operations at concurrency 1 per Hive and operation, in ${s.rounds} rounds, the Hives taking turns`);
    console.log(`seed: ${SEED.customers} customers, ${SEED.transactions} canceled (final) transactions; one sandbox key`);
    console.log('each Hive, the gateway and the emulator in its own process; CPU = utime + stime of that process, all its threads');
    console.log(`before: ${loadLine()}\n`);

    const rows = [];
    for (const op of operations(ids)) rows.push(...(await measure(hives, gateway, op, emulator, client, s)));
    console.log(
      markdownTable(
        ['operation', 'router', 'upstream calls/op', 'gateway CPU ms/op', 'Hive CPU ms/op', 'both, CPU ms/op', 'p50 ms', 'p99 ms'],
        rows.map((r) => [r.op, r.hive, fixed(r.calls / r.ops), fixed(r.gatewayCpuMs / r.ops), fixed(r.hiveCpuMs / r.ops), fixed((r.gatewayCpuMs + r.hiveCpuMs) / r.ops), ms(percentile(r.samples, 50)), ms(percentile(r.samples, 99))]),
      ),
    );
    console.log(`\nafter: ${loadLine()}`);
  } finally {
    client.close();
    await Promise.all(
      servers.map(
        (server) =>
          new Promise((resolve) => {
            if (server.child.exitCode !== null) return resolve(undefined);
            server.child.once('exit', resolve);
            server.child.kill('SIGTERM');
          }),
      ),
    );
    await emulator.stop();
  }
}
