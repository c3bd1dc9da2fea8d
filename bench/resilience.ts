/**
 * Resilience bench, all on 127.0.0.1, the gateway in this process
 * over a real emulator:
 *
 *  1. Flaky reads: every upstream read fails with a 500 with probability 10 %.
 *     Each operation reads a transaction and its customer (two upstream reads).
 *     Printed: the share of operations answered without any error, and the
 *     upstream amplification (upstream requests per operation), with retries
 *     off (UPSTREAM_MAX_ATTEMPTS=1) and on (the defaults).
 *  2. One hanging route: `GET /v1/customers/:id` never answers. Many clients
 *     keep asking for it (each at most once a second) while a few clients run
 *     operations that never touch it, back to back. Printed: p50/p99 of the operations that do not touch it, with no
 *     fault (baseline), with the per-route bulkhead (default cap), and with
 *     the cap lifted so the hanging route may take every pooled socket.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { startEmulator, type RunningEmulator } from '../emulator/index.js';
import { createLogger } from '../src/logger.js';
import { startGateway, type RunningGateway } from '../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../src/upstream/index.js';
import { factories } from '../test/support/factories.js';
import { codeLine, createJsonClient, loadLine, machineLine, markdownTable, ms, percentile, type Bench } from './support.js';

const KEY = 'sk_sandbox_bench_resilience';
const OPTIONS = {
  operations: { type: 'string', default: '2000' },
  concurrency: { type: 'string', default: '16' },
  'hang-seconds': { type: 'string', default: '4' },
  'hanging-clients': { type: 'string', default: '300' },
  'healthy-clients': { type: 'string', default: '8' },
} as const;

interface Gql {
  data?: unknown;
  errors?: unknown[];
}

async function stackWith(emulator: RunningEmulator, env: Record<string, string>): Promise<{ gateway: RunningGateway; upstream: UpstreamClient }> {
  // One key sends every operation of a load test: the per-key rate limit would measure itself (docs/security.md).
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', ...env });
  const upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
  const gateway = await startGateway({ config, upstream, logger: createLogger('silent') });
  return { gateway, upstream };
}

async function flakyReads(emulator: RunningEmulator, txId: number, operations: number, concurrency: number, env: Record<string, string>) {
  const { gateway, upstream } = await stackWith(emulator, env);
  const client = createJsonClient(concurrency);
  const body = { query: 'query ($id: ID!) { transaction(id: $id) { id amount customer { email } } }', variables: { id: String(txId) } };
  const headers = { authorization: `Bearer ${KEY}` };
  emulator.clearFaults();
  emulator.addFault({ route: '*', status: 500, probability: 0.1 });
  emulator.resetStats();
  let next = 0;
  let clean = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < operations) {
        const res = await client.post<Gql>(gateway.url, body, headers);
        if (res.status === 200 && res.body.errors === undefined) clean++;
      }
    }),
  );
  const requests = emulator.stats().total;
  emulator.clearFaults();
  client.close();
  await gateway.stop();
  upstream.close();
  return { clean: clean / operations, perOperation: requests / operations };
}

async function hangingRoute(
  emulator: RunningEmulator,
  txId: number,
  options: { seconds: number; hangingClients: number; healthyClients: number; hang: boolean },
  env: Record<string, string>,
) {
  const { gateway, upstream } = await stackWith(emulator, env);
  const hangingClient = createJsonClient(options.hangingClients);
  const healthyClient = createJsonClient(options.healthyClients);
  const headers = { authorization: `Bearer ${KEY}` };
  const touches = { query: 'query ($id: ID!) { transaction(id: $id) { id customer { email } } }', variables: { id: String(txId) } };
  // A route of its own (GET /v1/payouts/search): the transaction read of `touches` is shared, and busy.
  const avoids = { query: '{ payouts(first: 5) { totalCount nodes { id amount } } }' };
  emulator.clearFaults();
  if (options.hang) emulator.addFault({ route: 'GET /v1/customers/:id', hang: true });
  const until = performance.now() + options.seconds * 1000;
  const healthy: number[] = [];
  const healthyErrors = new Map<string, number>();
  const loops = [
    ...Array.from({ length: options.hangingClients }, async () => {
      // Paced, one request per caller per second at most: the point is sockets held, not CPU burnt on fast failures.
      while (performance.now() < until) {
        const started = performance.now();
        await hangingClient.post<Gql>(gateway.url, touches, headers);
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - started))));
      }
    }),
    ...Array.from({ length: options.healthyClients }, async () => {
      // Let the hanging clients take their sockets first.
      await new Promise((r) => setTimeout(r, 200));
      while (performance.now() < until) {
        const res = await healthyClient.post<Gql>(gateway.url, avoids, headers);
        healthy.push(res.ms);
        for (const e of (res.body.errors ?? []) as { extensions?: { code?: string } }[]) {
          const code = e.extensions?.code ?? 'unknown';
          healthyErrors.set(code, (healthyErrors.get(code) ?? 0) + 1);
        }
      }
    }),
  ];
  await Promise.all(loops);
  emulator.clearFaults();
  hangingClient.close();
  healthyClient.close();
  await gateway.stop();
  upstream.close();
  const errors = [...healthyErrors].map(([code, n]) => `${n} ${code}`).join(', ') || '0';
  return { n: healthy.length, p50: percentile(healthy, 50), p99: percentile(healthy, 99), errors };
}

export const resilienceBench: Bench = {
  name: 'resilience',
  summary: 'answers without error and upstream amplification under 10 % read 5xx; p99 of healthy operations beside a hanging route',
  usage: [
    '--operations N        operations in the flaky-reads runs (default 2000)',
    '--concurrency N       concurrent callers in the flaky-reads runs (default 16)',
    '--hang-seconds S      length of each hanging-route run (default 4)',
    '--hanging-clients N   callers stuck on the hanging route (default 300: more than the 256 pooled sockets)',
    '--healthy-clients N   callers whose operations avoid it (default 8)',
  ],
  async run(argv) {
    const { values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
    const operations = Number(values.operations);
    const concurrency = Number(values.concurrency);
    const hang = { seconds: Number(values['hang-seconds']), hangingClients: Number(values['hanging-clients']), healthyClients: Number(values['healthy-clients']) };

    const emulator = await startEmulator({ port: 0 });
    try {
      const make = factories(emulator, KEY);
      const customer = await make.customer();
      const tx = await make.transaction({ customer: { id: customer.id } });
      // No breaker in the flaky-reads runs: 10 % failures is below its threshold anyway; this keeps the runs comparable.
      const flakyEnv = { BREAKER_VOLUME_THRESHOLD: '1000000000' };

      const off = await flakyReads(emulator, tx.id, operations, concurrency, { ...flakyEnv, UPSTREAM_MAX_ATTEMPTS: '1' });
      const on = await flakyReads(emulator, tx.id, operations, concurrency, flakyEnv);

      const hangEnv = { UPSTREAM_TIMEOUT_MS: '1000', OPERATION_DEADLINE_MS: '1500', BREAKER_VOLUME_THRESHOLD: '1000000000' };
      const baseline = await hangingRoute(emulator, tx.id, { ...hang, hang: false }, hangEnv);
      const bulkhead = await hangingRoute(emulator, tx.id, { ...hang, hang: true }, hangEnv);
      const noBulkhead = await hangingRoute(emulator, tx.id, { ...hang, hang: true }, { ...hangEnv, UPSTREAM_ROUTE_CONCURRENCY: '1000000' });

      console.log(`# Resilience bench\n\n${machineLine()}\n${loadLine()}\n${codeLine()}\n`);
      console.log(`## 10 % of upstream reads answer 500 (${operations} operations of 2 reads each, ${concurrency} concurrent)\n`);
      console.log(
        markdownTable(
          ['retries', 'answered without error', 'upstream requests per operation'],
          [
            ['off (1 attempt)', `${(off.clean * 100).toFixed(1)} %`, off.perOperation.toFixed(3)],
            ['on (3 attempts, 20 % budget)', `${(on.clean * 100).toFixed(1)} %`, on.perOperation.toFixed(3)],
          ],
        ),
      );
      console.log(
        `\n## GET /v1/customers/:id hangs (${hang.hangingClients} callers on it, ${hang.healthyClients} callers avoiding it, ${hang.seconds} s, time-out 1 s, deadline 1.5 s)\n`,
      );
      console.log(
        markdownTable(
          ['run', 'operations avoiding the route', 'p50 ms', 'p99 ms', 'errors'],
          [
            ['no fault (baseline)', String(baseline.n), ms(baseline.p50), ms(baseline.p99), baseline.errors],
            ['route hangs, bulkhead 64', String(bulkhead.n), ms(bulkhead.p50), ms(bulkhead.p99), bulkhead.errors],
            ['route hangs, no bulkhead', String(noBulkhead.n), ms(noBulkhead.p50), ms(noBulkhead.p99), noBulkhead.errors],
          ],
        ),
      );
    } finally {
      await emulator.stop();
    }
  },
};
