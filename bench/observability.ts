/**
 * `npm run bench -- observability`: what metrics and traces cost in CPU on
 * the 50-item page (`payouts(first: 50)` with each payout's customer and
 * currency, entity cache off: 12 upstream calls and 16 spans per operation: the
 * operation, `resolve Query.payouts`, the customer and currency batches, and
 * one per call: 1 search, 10 customers, 1 currency). Three gateways
 * side by side in this process over one emulator in a child process (its CPU
 * is not counted): everything off, metrics only, metrics and traces exported
 * over OTLP/HTTP to a sink in this process (which reads and drops them).
 * Rounds alternate between the three in a rotating order, so drift in the
 * shared machine's load falls on all of them alike.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startGateway, type RunningGateway } from '../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../src/upstream/index.js';
import { factories } from '../test/support/factories.js';
import { startBenchEmulator } from './emulator-process.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const OPTIONS = {
  rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '24' },
  'ops-per-round': { type: 'string', default: process.env.BENCH_OPS_PER_ROUND ?? '15' },
  latency: { type: 'string', default: process.env.BENCH_LATENCY_MS ?? '0' },
  'emulator-in-process': { type: 'boolean', default: false },
} as const;

const KEY = 'sk_sandbox_bench_observability';
const PAGE = 'query PayoutPage { payouts(first: 50) { nodes { id amount customer { fullName } currency { iso } } } }';

interface Variant {
  name: string;
  env: Record<string, string>;
  gateway?: RunningGateway;
  upstream?: UpstreamClient;
  cpuMicros: number;
  samples: number[];
  /** CPU ms per operation in each round, to compare with the other variants' in the same round. */
  perRound: number[];
}

export const observabilityBench: Bench = {
  name: 'observability',
  summary: 'CPU per operation of the 50-item page with metrics and traces off, metrics on, both on (side by side)',
  usage: [
    '--rounds <n>             rounds; each runs every variant once, order rotating (env BENCH_ROUNDS, default 24)',
    '--ops-per-round <n>      operations per variant per round, one at a time (env BENCH_OPS_PER_ROUND, default 15)',
    '--latency <ms>           injected emulator latency per request (env BENCH_LATENCY_MS, default 0: CPU is the point)',
    '--emulator-in-process    run the emulator in this process (its CPU then counts too)',
  ],
  run: async (argv) => {
    const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
    const rounds = Math.max(1, Math.floor(Number(values.rounds)));
    const perRound = Math.max(1, Math.floor(Number(values['ops-per-round'])));
    const latencyMs = Math.max(0, Number(values.latency));
    await run(rounds, perRound, latencyMs, values['emulator-in-process'] !== true);
  },
};

async function run(rounds: number, perRound: number, latencyMs: number, separateProcess: boolean): Promise<void> {
  const emulator = await startBenchEmulator({ latencyMs, separateProcess });
  const sink = await startSink();
  const variants: Variant[] = [
    { name: 'off', env: { METRICS_ENABLED: 'false' }, cpuMicros: 0, samples: [], perRound: [] },
    { name: 'metrics', env: {}, cpuMicros: 0, samples: [], perRound: [] },
    { name: 'metrics + traces (OTLP/HTTP)', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }, cpuMicros: 0, samples: [], perRound: [] },
  ];
  const client = createJsonClient(1);
  try {
    const make = factories(emulator, KEY);
    const customers = [];
    for (let i = 0; i < 10; i++) customers.push(await make.customer());
    for (let i = 0; i < 50; i++) await make.payout({ amount: 500 + i, customer: { id: customers[i % 10]!.id } });

    for (const variant of variants) {
      // The entity cache off: every operation makes its 12 upstream calls, so 12 call spans and
      // their batch spans, the most traces can cost on this page.
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', ENTITY_CACHE: 'false', ...variant.env });
      variant.upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
      variant.gateway = await startGateway({ config, upstream: variant.upstream, logger: createLogger('silent') });
    }

    console.log('# observability bench');
    console.log(machineLine());
    console.log(codeLine());
    console.log(
      `payouts(first: 50) with customer and currency (12 upstream calls/op, cache off), L = ${latencyMs} ms, ${rounds} rounds x ${perRound} ops per variant, one at a time; ` +
        `emulator ${emulator.where}; CPU = user+system of this process (client, gateway${emulator.where === 'in-process' ? ', emulator' : ''}, OTLP sink)`,
    );
    console.log(`before: ${loadLine()}\n`);

    const once = async (variant: Variant) => {
      const res = await client.post<{ data?: { payouts?: { nodes: unknown[] } }; errors?: unknown }>(variant.gateway!.url, { query: PAGE }, { authorization: `Bearer ${KEY}` });
      if (res.status !== 200 || res.body.errors || res.body.data?.payouts?.nodes.length !== 50) throw new Error(`${variant.name}: bad answer ${JSON.stringify(res.body).slice(0, 300)}`);
      return res.ms;
    };
    // Warm-up: JIT, keep-alive sockets, the currency cache of each gateway.
    for (const variant of variants) for (let i = 0; i < 10; i++) await once(variant);

    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(round + k) % variants.length]!;
        const cpu = process.cpuUsage();
        for (let i = 0; i < perRound; i++) variant.samples.push(await once(variant));
        const used = process.cpuUsage(cpu);
        variant.cpuMicros += used.user + used.system;
        variant.perRound[round] = (used.user + used.system) / 1000 / perRound;
      }
    }
    // What the batch processor still holds goes out on stop; count it before reading the sink.
    const tracing = variants[2]!;
    await tracing.gateway!.stop();
    tracing.gateway = undefined;

    const off = variants[0]!;
    const base = off.cpuMicros / off.samples.length;
    const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)} %`;
    console.log(
      markdownTable(
        ['variant', 'ops', 'CPU ms/op', 'vs off (totals)', 'vs off (median of rounds)', 'p50 ms', 'p99 ms'],
        variants.map((v) => {
          const perOp = v.cpuMicros / v.samples.length;
          // The same round ran every variant within seconds: its ratio is the least disturbed by others' load.
          const ratios = v.perRound.map((cpu, round) => cpu / off.perRound[round]!);
          return [v.name, String(v.samples.length), ms(perOp / 1000), percent(perOp / base), percent(percentile(ratios, 50)), ms(percentile(v.samples, 50)), ms(percentile(v.samples, 99))];
        }),
      ),
    );
    console.log(`\nOTLP sink: ${sink.requests()} export requests, ${(sink.bytes() / 1024).toFixed(0)} KiB of JSON`);
    console.log(`after: ${loadLine()}`);
  } finally {
    client.close();
    for (const variant of variants) {
      await variant.gateway?.stop();
      variant.upstream?.close();
    }
    await sink.close();
    await emulator.stop();
  }
}

/** A collector that takes OTLP/HTTP exports and drops them, counting requests and bytes. */
async function startSink() {
  let requests = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    bytes: () => bytes,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
