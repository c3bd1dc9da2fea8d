/**
 * Two builds of the gateway side by side, cold (no entity cache, currency TTL 0), on one
 * emulator (5 ms per request): this checkout's dist/ against another's, for a change too
 * small for the peer bench's noise on a shared machine. Each operation is sent to both in
 * alternating rounds at concurrency 10; CPU ms per operation of each serving process, the
 * median and best of the rounds, and their ratio in each round.
 *
 *   npx tsx bench/cold-ab.ts --other <dir with a built dist/> [--transport got|node] [--op single|page] [--rounds 8] [--ops 300]
 *
 * Build both first (`npm run build` in each); the other checkout must have its node_modules.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/ports.js';
import { startBenchEmulator } from './emulator-process.js';
import { gatewayNodeFlags, PAGE_OF_50, seed, startServer, type Server } from './peer.js';
import { createJsonClient, loadLine } from './support.js';

const KEY = 'sk_sandbox_bench_peer';
const SINGLE = 'query ($id: ID!) { transaction(id: $id) { id amount status customer { email fullName } currency { iso } } }';

const { values } = parseArgs({
  options: {
    other: { type: 'string' },
    transport: { type: 'string', default: 'got' },
    op: { type: 'string', default: 'single' },
    rounds: { type: 'string', default: '8' },
    ops: { type: 'string', default: '300' },
  },
});
if (!values.other) throw new Error('--other <dir> is required');

const emulator = await startBenchEmulator({ latencyMs: 5, separateProcess: true });
const client = createJsonClient(10);
const servers: Server[] = [];
try {
  const ids = await seed(emulator, KEY);
  const env = (port: number) => ({ PORT: String(port), HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, RATE_LIMIT_PER_MINUTE: '0', ENTITY_CACHE: 'false', CURRENCY_CACHE_TTL_MS: '0', UPSTREAM_HTTP_CLIENT: values.transport! });
  const [a, b] = [await freePort(), await freePort()];
  servers.push(await startServer('this', 'dist/src/main.js', env(a), a, null, gatewayNodeFlags()));
  servers.push(await startServer('other', entryOf(values.other),  env(b), b, null, gatewayNodeFlags()));
  let sent = 0;
  const body = () => (values.op === 'page' ? { query: PAGE_OF_50.query } : { query: SINGLE, variables: { id: String(ids[sent++ % ids.length]) } });
  const run = async (server: Server, n: number) => {
    let done = 0;
    const before = server.cpuMs();
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (done < n) {
        done++;
        const res = await client.post<{ errors?: unknown }>(server.url, body(), { authorization: `Bearer ${KEY}` });
        if (res.status !== 200 || res.body.errors) throw new Error(JSON.stringify(res.body));
      }
    }));
    return (server.cpuMs() - before) / n;
  };
  for (const server of servers) await run(server, 200);
  const cpu: Record<string, number[]> = { this: [], other: [] };
  for (let r = 0; r < Number(values.rounds); r++) {
    const order = r % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) cpu[server.name]!.push(await run(server, Number(values.ops)));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const ratios = cpu.this!.map((v, i) => v / cpu.other![i]!);
  for (const name of ['this', 'other']) console.log(`${name}: CPU ms/op median ${median(cpu[name]!).toFixed(3)} best ${Math.min(...cpu[name]!).toFixed(3)} (${cpu[name]!.map((x) => x.toFixed(2)).join(' ')})`);
  console.log(`this / other per round: median ${median(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(2)).join(' ')})`);
  console.log(loadLine());
} finally {
  client.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => { if (s.child.exitCode !== null) return resolve(undefined); s.child.once('exit', resolve); s.child.kill('SIGTERM'); })));
  await emulator.stop();
}

/** A build's entry: dist/src/main.js since the emulator left src/, dist/main.js before. */
function entryOf(root: string): string {
  return existsSync(`${root}/dist/src/main.js`) ? `${root}/dist/src/main.js` : `${root}/dist/main.js`;
}
