/**
 * One operation, cold `transaction(id) { customer currency }`, on the gateway
 * alone (and the peer if asked), at concurrency 10: CPU ms per op, best of
 * several rounds, so a change to the per-call path can be measured in a few
 * seconds rather than the peer bench's minute and a half. Builds dist first.
 *
 *   npx tsx bench/cold-focus.ts [--transport node|got] [--rounds 5] [--ops 400] [--cpu-prof dir] [--peer] [--no-build]
 */
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/ports.js';
import { startBenchEmulator } from './emulator-process.js';
import { entryPoints, gatewayNodeFlags, seed, startServer, type Server } from './peer.js';
import { createJsonClient, loadLine } from './support.js';

const KEY = 'sk_sandbox_bench_peer';
const QUERY = 'query ($id: ID!) { transaction(id: $id) { id amount status customer { email fullName } currency { iso } } }';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'node' },
    rounds: { type: 'string', default: '5' },
    ops: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '10' },
    'cpu-prof': { type: 'string' },
    peer: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
  },
});

const emulator = await startBenchEmulator({ latencyMs: 5, separateProcess: true });
const client = createJsonClient(Number(values.concurrency));
const servers: Server[] = [];
try {
  const ids = await seed(emulator, KEY);
  const entry = values['no-build'] ? { gateway: 'dist/src/main.js', peer: 'node_modules/.cache/bench-peer/server.mjs' } : entryPoints(false);
  const prof = values['cpu-prof'] ?? null;
  const port = await freePort();
  servers.push(await startServer(`gateway-${values.transport}`, entry.gateway, { PORT: String(port), HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, RATE_LIMIT_PER_MINUTE: '0', ENTITY_CACHE: 'false', CURRENCY_CACHE_TTL_MS: '0', UPSTREAM_HTTP_CLIENT: values.transport! }, port, prof, gatewayNodeFlags()));
  if (values.peer) {
    const p = await freePort();
    servers.push(await startServer('peer', entry.peer, { PEER_PORT: String(p), PAYMENTS_API_URL: emulator.url }, p, prof));
  }
  let sent = 0;
  const run = async (server: Server, n: number) => {
    let done = 0;
    const before = server.cpuMs();
    await Promise.all(Array.from({ length: Number(values.concurrency) }, async () => {
      while (done < n) {
        done++;
        const res = await client.post<{ data?: { transaction?: { currency?: { iso: string } } }; errors?: unknown }>(server.url, { query: QUERY, variables: { id: String(ids[sent++ % ids.length]) } }, { authorization: `Bearer ${KEY}` });
        if (res.status !== 200 || res.body.errors || res.body.data?.transaction?.currency?.iso !== 'XOF') throw new Error(JSON.stringify(res.body));
      }
    }));
    return (server.cpuMs() - before) / n;
  };
  for (const server of servers) await run(server, 200);
  const best = new Map<string, number[]>();
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const server of servers) {
      const v = await run(server, Number(values.ops));
      best.set(server.name, [...(best.get(server.name) ?? []), v]);
    }
  }
  for (const [name, v] of best) console.log(`${name}: CPU ms/op c=${values.concurrency} best ${Math.min(...v).toFixed(3)} median ${v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!.toFixed(3)} (${v.map((x) => x.toFixed(2)).join(' ')})`);
  console.log(loadLine());
} finally {
  client.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => { if (s.child.exitCode !== null) return resolve(undefined); s.child.once('exit', resolve); s.child.kill('SIGTERM'); })));
  await emulator.stop();
}
