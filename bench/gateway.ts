/**
 * Gateway latency bench: a fixed set of GraphQL operations against
 * the emulator with an injected per-request latency L, each beside its floor
 * (upstream depth x L). Gateway(s) and client run in this process on
 * 127.0.0.1; the emulator too, or in a child process with
 * `--emulator-process`. The figures are overheads and ratios on this machine,
 * not absolute claims.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startGateway, type RunningGateway } from '../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../src/upstream/index.js';
import { factories } from '../test/support/factories.js';
import { startBenchEmulator, type BenchEmulator } from './emulator-process.js';
import {
  createJsonClient,
  codeLine,
  loadLine,
  machineLine,
  markdownTable,
  ms,
  percentile,
  signedMs,
  watchConnections,
  type Bench,
} from './support.js';

interface Settings {
  latencyMs: number;
  iterations: number;
  warmup: number;
  timeCapMs: number;
  concurrency: number;
  concurrentOps: number;
  emulatorProcess: boolean;
}

const OPTIONS = {
  latency: { type: 'string', default: process.env.BENCH_LATENCY_MS ?? '20' },
  iterations: { type: 'string', default: process.env.BENCH_ITERATIONS ?? '50' },
  warmup: { type: 'string', default: process.env.BENCH_WARMUP ?? '5' },
  'time-cap': { type: 'string', default: process.env.BENCH_TIME_CAP_S ?? '10' },
  concurrency: { type: 'string', default: process.env.BENCH_CONCURRENCY ?? '10' },
  'concurrent-ops': { type: 'string', default: process.env.BENCH_CONCURRENT_OPS ?? '300' },
  'emulator-process': { type: 'boolean', default: process.env.BENCH_EMULATOR_PROCESS === '1' },
} as const;

function readSettings(argv: string[]): Settings {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const num = (name: Exclude<keyof typeof OPTIONS, 'emulator-process'>, min: number): number => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
    return value;
  };
  return {
    latencyMs: num('latency', 0),
    iterations: Math.floor(num('iterations', 1)),
    warmup: Math.floor(num('warmup', 0)),
    timeCapMs: num('time-cap', 1) * 1000,
    concurrency: Math.floor(num('concurrency', 1)),
    concurrentOps: Math.floor(num('concurrent-ops', 1)),
    emulatorProcess: values['emulator-process'] === true,
  };
}

const KEY = 'sk_sandbox_bench_gateway';
const AUTH = { authorization: `Bearer ${KEY}` };

const REST_BASELINE = 'baseline: REST';

const SEED = { customers: 10, payouts: 50, transactions: 20 };

interface GqlBody {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
}

/** Request to issue for one iteration; fixtures (if any) are made before the timed loop. */
type Request = { kind: 'gql'; gateway: 'warm' | 'cold'; query: string; variables?: Record<string, unknown> } | { kind: 'get'; url: string; auth: boolean };

interface Operation {
  name: string;
  /** Sequential upstream round trips on the critical path. */
  depth: number;
  currencyCache: 'warm' | 'cold (TTL 0)' | 'n/a';
  /** Builds `count` requests; may create upstream fixtures (not counted: stats are reset afterwards). */
  prepare(count: number): Promise<Request[]>;
  /** Throws when the answer is not the expected one: a fast error must never pass for a fast answer. */
  check(body: GqlBody | string): void;
}

interface Result {
  op: Operation;
  n: number;
  samples: number[];
  callsPerOp: number;
  routes: string;
  newUpstreamConnections: number;
  newGatewayConnections: number;
  cpuMsPerOp: number;
}

export const gatewayBench: Bench = {
  name: 'gateway',
  summary: 'GraphQL operations against the emulator with latency L: upstream calls/op, p50/p99 beside the floor (depth x L)',
  usage: [
    '--latency <ms>         injected emulator latency L per request (env BENCH_LATENCY_MS, default 20; jitter is 0)',
    '--iterations <n>       measured iterations per operation at concurrency 1 (env BENCH_ITERATIONS, default 50)',
    '--warmup <n>           unmeasured iterations first (env BENCH_WARMUP, default 5)',
    '--time-cap <s>         cap per operation, warm-up excluded (env BENCH_TIME_CAP_S, default 10)',
    '--concurrency <c>      workers for the throughput run of the connection query (env BENCH_CONCURRENCY, default 10)',
    '--concurrent-ops <n>   operations in the throughput run (env BENCH_CONCURRENT_OPS, default 300)',
    '--emulator-process     run the emulator in a child process, as a real upstream (env BENCH_EMULATOR_PROCESS=1)',
  ],
  run: async (argv) => runGatewayBench(readSettings(argv)),
};

async function runGatewayBench(s: Settings): Promise<void> {
  const emulator = await startBenchEmulator({ latencyMs: s.latencyMs, separateProcess: s.emulatorProcess });
  // UPSTREAM_HTTP_CLIENT=node measures the other transport; got, the default, otherwise.
  const upstream = createUpstreamClient({ baseUrl: emulator.url, httpClient: process.env.UPSTREAM_HTTP_CLIENT === 'node' ? 'node' : 'got' });
  // Per-request latency is measured here: customers are read every time (the entity
  // cache is measured by `npm run bench -- peer`); only the currency list is kept.
  const warm = await gatewayOn(emulator, upstream, { CUSTOMER_CACHE_TTL_MS: '0' });
  // Same emulator and client, with no cache across requests at all.
  const cold = await gatewayOn(emulator, upstream, { ENTITY_CACHE: 'false', CURRENCY_CACHE_TTL_MS: '0' });
  const client = createJsonClient(Math.max(1, s.concurrency));
  const connections = watchConnections();

  try {
    const fixtures = await seed(emulator);
    const ops = operations(emulator, warm, cold, fixtures);

    console.log(`# gateway bench`);
    console.log(machineLine());
    console.log(codeLine());
    console.log(`upstream HTTP client: ${upstream.httpClient}`);
    console.log(
      `L = ${s.latencyMs} ms per upstream request (jitter 0), concurrency 1, ${s.warmup} warm-up + up to ${s.iterations} iterations per operation (cap ${s.timeCapMs / 1000} s)`,
    );
    console.log(`seed: ${SEED.customers} customers, ${SEED.payouts} payouts spread over them, ${SEED.transactions} transactions; one sandbox key`);
    console.log(
      emulator.where === 'in-process'
        ? 'emulator, gateway and client share this process and its event loop; read overheads and ratios, not absolute figures'
        : 'the emulator runs in a child process; gateway and client share this one; read overheads and ratios, not absolute figures',
    );
    console.log(`before: ${loadLine()}\n`);

    const results: Result[] = [];
    for (const op of ops) {
      results.push(await measure(op, s, emulator, client, connections, { warm, cold }));
    }

    // What one upstream round trip really costs here (emulator timer slop and HTTP included):
    // p50 minus depth times this is the gateway's own share.
    const hop = percentile(results.find((r) => r.op.name.startsWith(REST_BASELINE))!.samples, 50);
    console.log(
      markdownTable(
        ['operation', 'upstream calls/op', 'depth', 'currency cache', 'floor ms', 'p50 ms', 'p99 ms', 'p50 - floor', 'p50 - depth x hop', 'CPU ms/op', 'n'],
        results.map((r) => {
          const floor = r.op.depth * s.latencyMs;
          const p50 = percentile(r.samples, 50);
          return [
            r.op.name,
            formatCalls(r.callsPerOp),
            String(r.op.depth),
            r.op.currencyCache,
            ms(floor),
            ms(p50),
            ms(percentile(r.samples, 99)),
            signedMs(p50 - floor),
            r.op.name.startsWith(REST_BASELINE) ? '-' : signedMs(p50 - r.op.depth * hop),
            ms(r.cpuMsPerOp),
            String(r.n),
          ];
        }),
      ),
    );
    console.log(
      `\nhop = p50 of the direct REST baseline (${ms(hop)} ms): one upstream round trip without the gateway. ` +
        `CPU ms/op: user+system CPU of this process (client, gateway${emulator.where === 'in-process' ? ', emulator' : ''}) per operation.`,
    );
    console.log('\nupstream routes per operation, and TCP connections opened during the measured loop (0 = every socket reused):\n');
    console.log(
      markdownTable(
        ['operation', 'routes per op', 'new upstream conns', 'new client->gateway conns'],
        results.map((r) => [r.op.name, r.routes || '-', String(r.newUpstreamConnections), String(r.newGatewayConnections)]),
      ),
    );

    const connection = ops.find((op) => op.name.startsWith('payouts(first: 50)') && op.currencyCache === 'warm')!;
    await throughput(connection, s, emulator, client, connections, { warm, cold });
    console.log(`\nafter: ${loadLine()}`);
  } finally {
    connections.stop();
    client.close();
    await warm.stop();
    await cold.stop();
    upstream.close();
    await emulator.stop();
  }
}

async function gatewayOn(emulator: BenchEmulator, upstream: UpstreamClient, env: Record<string, string>): Promise<RunningGateway> {
  // One key sends every operation of a load test: the per-key rate limit would measure itself (docs/security.md).
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', ...env });
  return startGateway({ config, upstream, logger: createLogger('silent') });
}

interface Fixtures {
  customerIds: number[];
  transactionIds: number[];
}

async function seed(emulator: BenchEmulator): Promise<Fixtures> {
  const make = factories(emulator, KEY);
  const customerIds: number[] = [];
  for (let i = 0; i < SEED.customers; i++) customerIds.push((await make.customer()).id);
  const transactionIds: number[] = [];
  for (let i = 0; i < SEED.payouts; i++) {
    await make.payout({ amount: 500 + i, customer: { id: customerIds[i % customerIds.length] } });
  }
  for (let i = 0; i < SEED.transactions; i++) {
    transactionIds.push((await make.transaction({ amount: 1000 + i, customer: { id: customerIds[i % customerIds.length] } })).id);
  }
  return { customerIds, transactionIds };
}

/** The operations the bench measures; test/security/documented-operations.test.ts runs them under the default limits. */
export const BENCH_OPERATIONS = {
  byId: 'query ($id: ID!) { transaction(id: $id) { id amount status } }',
  withRelations: 'query ($id: ID!) { transaction(id: $id) { amount customer { email } currency { iso } } }',
  connection: '{ payouts(first: 50) { nodes { id amount customer { fullName } currency { iso } } } }',
} as const;

function operations(emulator: BenchEmulator, warm: RunningGateway, cold: RunningGateway, fx: Fixtures): Operation[] {
  const make = factories(emulator, KEY);
  const txId = (i: number) => String(fx.transactionIds[i % fx.transactionIds.length]);
  const gql = (gateway: 'warm' | 'cold', query: string, variables?: (i: number) => Record<string, unknown>) => async (count: number) =>
    Array.from({ length: count }, (_, i): Request => ({ kind: 'gql', gateway, query, ...(variables ? { variables: variables(i) } : {}) }));

  const { byId, withRelations, connection } = BENCH_OPERATIONS;

  const transactionWithRelations = (body: GqlBody | string) => {
    const t = data(body).transaction as { customer?: { email?: string } | null; currency?: { iso?: string } | null } | null;
    if (!t?.customer?.email || t.currency?.iso !== 'XOF') throw new Error(`incomplete transaction: ${JSON.stringify(body)}`);
  };
  const payoutPage = (body: GqlBody | string) => {
    const nodes = (data(body).payouts as { nodes: { customer: { fullName: string } | null; currency: { iso: string } | null }[] }).nodes;
    if (nodes.length !== SEED.payouts || nodes.some((n) => !n.customer?.fullName || n.currency?.iso !== 'XOF')) {
      throw new Error(`incomplete payout page: ${nodes.length} nodes`);
    }
  };

  return [
    {
      name: 'baseline: GET /healthz (HTTP only)',
      depth: 0,
      currencyCache: 'n/a',
      prepare: async (count) => Array.from({ length: count }, (): Request => ({ kind: 'get', url: warm.url.replace(/\/graphql$/, '/healthz'), auth: false })),
      check: (body) => {
        if (!String(body).includes('ok')) throw new Error(`unexpected healthz: ${String(body)}`);
      },
    },
    {
      name: 'baseline: { __typename } (GraphQL, no upstream)',
      depth: 0,
      currencyCache: 'n/a',
      prepare: gql('warm', '{ __typename }'),
      check: (body) => {
        if (data(body).__typename !== 'Query') throw new Error(`unexpected: ${JSON.stringify(body)}`);
      },
    },
    {
      name: `${REST_BASELINE} GET /v1/transactions/:id (no gateway)`,
      depth: 1,
      currencyCache: 'n/a',
      prepare: async (count) =>
        Array.from({ length: count }, (_, i): Request => ({ kind: 'get', url: `${emulator.url}/v1/transactions/${txId(i)}`, auth: true })),
      check: (body) => {
        if (!String(body).includes('"amount"')) throw new Error(`unexpected REST body: ${String(body).slice(0, 200)}`);
      },
    },
    {
      name: 'transaction(id) { id amount status }',
      depth: 1,
      currencyCache: 'n/a',
      prepare: gql('warm', byId, (i) => ({ id: txId(i) })),
      check: (body) => {
        const t = data(body).transaction as { amount?: number } | null;
        if (typeof t?.amount !== 'number') throw new Error(`no transaction: ${JSON.stringify(body)}`);
      },
    },
    {
      name: 'transaction(id) { amount customer currency }',
      depth: 2,
      currencyCache: 'warm',
      prepare: gql('warm', withRelations, (i) => ({ id: txId(i) })),
      check: transactionWithRelations,
    },
    {
      name: 'transaction(id) { amount customer currency }',
      depth: 2,
      currencyCache: 'cold (TTL 0)',
      prepare: gql('cold', withRelations, (i) => ({ id: txId(i) })),
      check: transactionWithRelations,
    },
    {
      name: 'payouts(first: 50) { nodes { customer currency } }',
      depth: 2,
      currencyCache: 'warm',
      prepare: gql('warm', connection),
      check: payoutPage,
    },
    {
      name: 'payouts(first: 50) { nodes { customer currency } }',
      depth: 2,
      currencyCache: 'cold (TTL 0)',
      prepare: gql('cold', connection),
      check: payoutPage,
    },
    {
      name: 'mutation createCustomer',
      depth: 1,
      currencyCache: 'n/a',
      prepare: gql(
        'warm',
        'mutation ($input: CreateCustomerInput!) { createCustomer(input: $input) { customer { id email } userErrors { message } } }',
        (i) => ({ input: { firstname: 'Kofi', lastname: `Bench${i}`, email: `kofi.bench.${Date.now()}.${i}@example.com` } }),
      ),
      check: (body) => {
        const p = data(body).createCustomer as { customer: { id: string } | null; userErrors: unknown[] };
        if (!p.customer || p.userErrors.length > 0) throw new Error(`createCustomer refused: ${JSON.stringify(body)}`);
      },
    },
    {
      name: 'mutation sendTransaction (token, send)',
      depth: 2,
      currencyCache: 'n/a',
      // Each send needs its own pending transaction: made here, before the stats are reset.
      prepare: async (count) => {
        const requests: Request[] = [];
        for (let i = 0; i < count; i++) {
          const t = await make.transaction({ amount: 2000 + i, customer: { id: fx.customerIds[i % fx.customerIds.length] } });
          requests.push({
            kind: 'gql',
            gateway: 'warm',
            query: 'mutation ($id: ID!) { sendTransaction(id: $id, mode: "mtn") { paymentIntents { status } userErrors { message } } }',
            variables: { id: String(t.id) },
          });
        }
        return requests;
      },
      check: (body) => {
        const p = data(body).sendTransaction as { paymentIntents: unknown[]; userErrors: unknown[] };
        if (p.paymentIntents.length === 0 || p.userErrors.length > 0) throw new Error(`sendTransaction refused: ${JSON.stringify(body)}`);
      },
    },
  ];
}

function data(body: GqlBody | string): Record<string, unknown> {
  if (typeof body === 'string' || body.errors?.length || !body.data) throw new Error(`GraphQL errors: ${errorSummary(body)}`);
  return body.data;
}

/** `UPSTREAM_UNAVAILABLE/route_saturated x50`: what failed, without pages of JSON. */
function errorSummary(body: GqlBody | string): string {
  if (typeof body === 'string' || !body.errors?.length) return JSON.stringify(body).slice(0, 300);
  const counts = new Map<string, number>();
  for (const error of body.errors as { message?: string; extensions?: { code?: string; reason?: string } }[]) {
    const kind = [error.extensions?.code ?? error.message, error.extensions?.reason].filter(Boolean).join('/');
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([kind, n]) => `${kind} x${n}`).join(', ');
}

type Client = ReturnType<typeof createJsonClient>;
type Gateways = { warm: RunningGateway; cold: RunningGateway };

async function issue(client: Client, gateways: Gateways, request: Request): Promise<{ ms: number; body: GqlBody | string }> {
  if (request.kind === 'get') {
    const res = await client.get(request.url, request.auth ? AUTH : {});
    if (res.status !== 200) throw new Error(`GET ${request.url} -> ${res.status}`);
    return res;
  }
  const res = await client.post<GqlBody>(gateways[request.gateway].url, { query: request.query, variables: request.variables }, AUTH);
  if (res.status !== 200) throw new Error(`GraphQL -> ${res.status}: ${errorSummary(res.body)}`);
  return res;
}

async function measure(
  op: Operation,
  s: Settings,
  emulator: BenchEmulator,
  client: Client,
  connections: ReturnType<typeof watchConnections>,
  gateways: Gateways,
): Promise<Result> {
  const requests = await op.prepare(s.warmup + s.iterations);
  for (const request of requests.slice(0, s.warmup)) op.check((await issue(client, gateways, request)).body);

  await emulator.resetStats();
  const upstreamBefore = connections.opened(emulator.port);
  const gatewayBefore = connections.opened(gateways.warm.port) + connections.opened(gateways.cold.port);
  const samples: number[] = [];
  const cpu = process.cpuUsage();
  const deadline = performance.now() + s.timeCapMs;
  for (const request of requests.slice(s.warmup)) {
    if (performance.now() > deadline) break;
    const res = await issue(client, gateways, request);
    op.check(res.body);
    samples.push(res.ms);
  }
  const cpuUsed = process.cpuUsage(cpu);
  const stats = await emulator.stats();
  const n = samples.length;
  return {
    cpuMsPerOp: (cpuUsed.user + cpuUsed.system) / 1000 / n,
    op,
    n,
    samples,
    callsPerOp: stats.total / n,
    routes: Object.entries(stats.routes)
      .map(([route, count]) => `${route} x${formatCalls(count / n)}`)
      .join(', '),
    newUpstreamConnections: connections.opened(emulator.port) - upstreamBefore,
    newGatewayConnections: connections.opened(gateways.warm.port) + connections.opened(gateways.cold.port) - gatewayBefore,
  };
}

async function throughput(
  op: Operation,
  s: Settings,
  emulator: BenchEmulator,
  client: Client,
  connections: ReturnType<typeof watchConnections>,
  gateways: Gateways,
): Promise<void> {
  const requests = await op.prepare(s.concurrentOps);
  // Warm every worker's socket first, so the run measures steady state.
  // (Failures here are not counted: the measured run below reports its own.)
  await Promise.all(requests.slice(0, s.concurrency).map((r) => issue(client, gateways, r).catch(() => undefined)));

  await emulator.resetStats();
  const upstreamBefore = connections.opened(emulator.port);
  const samples: number[] = [];
  const failures = new Map<string, number>();
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + s.timeCapMs;
  const worker = async () => {
    while (next < requests.length && performance.now() < deadline) {
      const request = requests[next++]!;
      // Under load a failure is a finding, not a bench bug: count it and go on.
      try {
        const res = await issue(client, gateways, request);
        samples.push(res.ms);
        op.check(res.body);
      } catch (error) {
        const kind = error instanceof Error ? error.message : String(error);
        failures.set(kind, (failures.get(kind) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: s.concurrency }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  const cpuUsed = process.cpuUsage(cpu);
  const floor = op.depth * s.latencyMs;
  const stats = await emulator.stats();

  console.log(`\nthroughput: ${op.name}, currency cache ${op.currencyCache}, concurrency ${s.concurrency}\n`);
  console.log(
    markdownTable(
      ['ops', 'failed', 'ops/s', 'ideal ops/s (c / floor)', 'upstream calls/op', 'p50 ms', 'p99 ms', 'p50 - floor', 'CPU ms/op', 'new upstream conns'],
      [
        [
          String(samples.length),
          String([...failures.values()].reduce((a, b) => a + b, 0)),
          (samples.length / elapsedS).toFixed(0),
          floor > 0 ? ((s.concurrency * 1000) / floor).toFixed(0) : '-',
          formatCalls(stats.total / samples.length),
          ms(percentile(samples, 50)),
          ms(percentile(samples, 99)),
          signedMs(percentile(samples, 50) - floor),
          ms((cpuUsed.user + cpuUsed.system) / 1000 / samples.length),
          String(connections.opened(emulator.port) - upstreamBefore),
        ],
      ],
    ),
  );
  for (const [kind, count] of failures) console.log(`\nfailed x${count}: ${kind}`);
}

function formatCalls(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}
