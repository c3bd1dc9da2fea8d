/**
 * `npm run bench -- abuse`: the attacks of docs/security.md against a
 * gateway with its limits lifted ("limits off") and with the defaults, side
 * by side in one run. Each row: upstream calls, answer bytes, the gateway
 * process's peak RSS growth, wall time, and for the flood another caller's
 * latency against its latency alone. The gateway runs in this process, the
 * emulator too; RSS is sampled every 20 ms.
 */
import { loadConfig } from '../src/config.js';
import { startEmulator } from '../emulator/index.js';
import { createLogger } from '../src/logger.js';
import { startGateway } from '../src/server/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { emulatorAdmin, newKey } from '../test/support/harness.js';
import { codeLine, machineLine, markdownTable, type Bench } from './support.js';

/** Every limit out of the way: what the attacks cost without them. */
const LIMITS_OFF: Record<string, string> = {
  MAX_ALIASES: '100000',
  MAX_QUERY_TOKENS: '1000000',
  MAX_QUERY_DEPTH: '100',
  MAX_OPERATION_COST: '100000000',
  MAX_UPSTREAM_CALLS_PER_OPERATION: '1000000',
  MAX_RESPONSE_BYTES: '2000000000',
  MAX_LOG_TEXT_CHARS: '1000000',
  REJECTED_KEY_TTL_MS: '0',
  RATE_LIMIT_PER_MINUTE: '0',
  UPSTREAM_CALLER_SHARE: '1',
};

interface Row {
  attack: string;
  upstreamCalls: number;
  bytes: number;
  peakRssMb: number;
  ms: number;
  extra?: string;
}

async function stackWith(env: Record<string, string>) {
  const emulator = await startEmulator({ port: 0, settleMs: 50, maxLogsPerAccount: 10_000 });
  // The attacks are on the upstream path: no object from the entity cache (it would hide the flood).
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', ENTITY_CACHE: 'false', ...env });
  const upstream = createUpstreamClient({ baseUrl: emulator.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
  const gateway = await startGateway({ config, upstream, logger: createLogger('silent') });
  const admin = emulatorAdmin(emulator.url);
  const post = async (query: string, key: string) => {
    const res = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query }) });
    return res.text();
  };
  const calls = async () => ((await admin('GET', '/_emulator/stats')) as { total: number }).total;
  return {
    emulator,
    admin,
    post,
    calls,
    async stop() {
      await gateway.stop();
      upstream.close();
      await emulator.stop();
    },
  };
}

async function measure(attack: string, run: () => Promise<{ bytes: number; calls: number; extra?: string }>): Promise<Row> {
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = Date.now();
  try {
    const { bytes, calls, extra } = await run();
    return { attack, upstreamCalls: calls, bytes, peakRssMb: (peak - base) / 2 ** 20, ms: Date.now() - started, ...(extra ? { extra } : {}) };
  } finally {
    clearInterval(sampler);
  }
}

async function attacks(env: Record<string, string>): Promise<Row[]> {
  const stack = await stackWith(env);
  const rows: Row[] = [];
  try {
    const key = newKey('abuse');
    // Logged requests with 900-character bodies, so `logs { response body }` is heavy.
    for (let i = 0; i < 100; i++) await stack.post(`mutation { createCustomer(input: { firstname: "${'A'.repeat(400)}", lastname: "B", email: "a${i}@example.com" }) { customer { id } } }`, key);
    const aliases = (n: number, f: (i: number) => string) => `{ ${Array.from({ length: n }, (_, i) => f(i)).join(' ')} }`;

    await stack.admin('DELETE', '/_emulator/stats');
    rows.push(await measure('10,000 aliases of transaction(id)', async () => {
      const text = await stack.post(aliases(10_000, (i) => `t${i}: transaction(id: "${i + 1}") { id }`), key);
      return { bytes: text.length, calls: await stack.calls() };
    }));

    await stack.admin('POST', '/_emulator/faults', { route: '*', status: 401 });
    await stack.admin('DELETE', '/_emulator/stats');
    rows.push(await measure('the same, 3 times, with a key the upstream rejects', async () => {
      const bad = newKey('rejected');
      let bytes = 0;
      for (let i = 0; i < 3; i++) bytes += (await stack.post(aliases(1_000, (j) => `t${j}: transaction(id: "${j + 1}") { id }`), bad)).length;
      return { bytes, calls: await stack.calls() };
    }));
    await stack.admin('DELETE', '/_emulator/faults');

    await stack.admin('DELETE', '/_emulator/stats');
    rows.push(await measure('100 aliases of logs(first: 100) { nodes { body response } }', async () => {
      const text = await stack.post(aliases(100, (i) => `l${i}: logs(first: 100) { nodes { body response } }`), key);
      return { bytes: text.length, calls: await stack.calls() };
    }));

    await stack.admin('DELETE', '/_emulator/stats');
    rows.push(await measure('a slow route flooded by one key: another key\'s read', async () => {
      const victim = newKey('victim');
      const ids: number[] = [];
      for (let i = 0; i < 10; i++) ids.push(Number(/"id":"?(\d+)/.exec(await stack.post(`mutation { createCustomer(input: { firstname: "F", lastname: "L", email: "f${i}@example.com" }) { customer { id } } }`, key))![1]));
      const victimId = /"id":"?(\d+)/.exec(await stack.post('mutation { createCustomer(input: { firstname: "V", lastname: "L", email: "v@example.com" }) { customer { id } } }', victim))![1];
      await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', latencyMs: 200 });
      const read = async () => {
        const at = Date.now();
        await stack.post(`{ customer(id: "${victimId}") { email } }`, victim);
        return Date.now() - at;
      };
      await read();
      const alone = await read();
      const flood = aliases(10, (i) => `c${i}: customer(id: "${ids[i]}") { email }`);
      const floods = Array.from({ length: 40 }, () => stack.post(flood, key));
      await new Promise((r) => setTimeout(r, 100));
      const during = await read();
      const bytes = (await Promise.all(floods)).reduce((n, t) => n + t.length, 0);
      await stack.admin('DELETE', '/_emulator/faults');
      return { bytes, calls: await stack.calls(), extra: `victim ${during} ms vs ${alone} ms alone: ${(during / alone).toFixed(1)}x` };
    }));
  } finally {
    await stack.stop();
  }
  return rows;
}

export const abuseBench: Bench = {
  name: 'abuse',
  summary: 'the docs/security.md attacks with limits off and with the defaults: upstream calls, bytes, peak RSS, victim latency',
  usage: [],
  async run() {
    const off = await attacks(LIMITS_OFF);
    const on = await attacks({ UPSTREAM_ROUTE_CONCURRENCY: '64' });
    const mb = (n: number) => (n / 2 ** 20).toFixed(2);
    const rows = off.map((o, i) => {
      const d = on[i]!;
      return [o.attack, `${o.upstreamCalls} / ${d.upstreamCalls}`, `${mb(o.bytes)} / ${mb(d.bytes)}`, `${o.peakRssMb.toFixed(0)} / ${d.peakRssMb.toFixed(0)}`, `${o.ms} / ${d.ms}`, [o.extra, d.extra].filter(Boolean).join(' -> ')];
    });
    console.log(machineLine());
    console.log(codeLine());
    console.log(markdownTable(['attack (limits off / defaults)', 'upstream calls', 'answer MB', 'peak RSS growth MB', 'ms', 'other caller'], rows));
  },
};
