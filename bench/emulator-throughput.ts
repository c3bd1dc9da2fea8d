/**
 * Requests per second of the emulator for `GET /v1/transactions/{id}` at 50
 * concurrent keep-alive connections. The emulator runs in its own process (as
 * `npm run emulator` does) so that the load generator does not share its
 * event loop.
 *
 *   npx tsx bench/emulator-throughput.ts [seconds=5] [connections=50]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 50);
const KEY = 'sk_sandbox_bench';

const mainPath = fileURLToPath(new URL('../emulator/main.ts', import.meta.url));
const child = spawn(process.execPath, ['--import', 'tsx', mainPath], {
  env: { ...process.env, EMULATOR_PORT: '0', LOG_LEVEL: 'warn', EMULATOR_SEED: 'false' },
  stdio: ['ignore', 'pipe', 'inherit'],
});

const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m?.[1]) resolve(m[1]);
  });
  child.once('exit', (code) => reject(new Error(`emulator exited with ${code}`)));
});

const created = await fetch(`${url}/v1/transactions`, {
  method: 'POST',
  headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ amount: 1000, currency: { iso: 'XOF' }, description: 'bench' }),
});
const id = ((await created.json()) as { 'v1/transaction': { id: number } })['v1/transaction'].id;
const { hostname, port } = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });

function get(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { hostname, port, path: `/v1/transactions/${id}`, agent, headers: { authorization: `Bearer ${KEY}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

// Warm up connections and the JIT.
await Promise.all(Array.from({ length: connections * 4 }, get));

const latencies: number[] = [];
let errors = 0;
const deadline = performance.now() + seconds * 1000;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const start = performance.now();
      const status = await get().catch(() => 0);
      latencies.push(performance.now() - start);
      if (status !== 200) errors++;
    }
  }),
);
const elapsed = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => (latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0).toFixed(2);

process.stdout.write(
  `GET /v1/transactions/{id}, ${connections} connections, ${elapsed.toFixed(1)} s: ` +
    `${Math.round(latencies.length / elapsed)} req/s, p50 ${pct(50)} ms, p99 ${pct(99)} ms, ${latencies.length} requests, ${errors} errors\n`,
);

agent.destroy();
child.kill('SIGTERM');
