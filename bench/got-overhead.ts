/**
 * What one upstream request costs in CPU through got, beside a bare
 * keep-alive `http.get`: `npx tsx bench/got-overhead.ts`. Client and a
 * trivial JSON server share this process, so each figure holds both sides;
 * the server's share is the same in every row. Rows:
 * - bare http.get: node:http with a keep-alive agent, the floor;
 * - got, options per call: headers, time-out and method given on each call;
 * - got, URL only: no per-call options to merge;
 * - got, prebuilt Options: `got(url, undefined, options)`, options made once;
 * - the gateway's two transports (src/upstream/transport-*.ts, UPSTREAM_HTTP_CLIENT),
 *   called as http.ts calls them: what switching the setting saves per call.
 */
import http from 'node:http';
import got, { Options } from 'got';
import { createGotTransport } from '../src/upstream/transport-got.js';
import { createNodeTransport } from '../src/upstream/transport-node.js';
import type { TransportRequest } from '../src/upstream/transport.js';

const CALLS = 5000;
const CONCURRENCY = 10;

const server = http.createServer((_req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end('{"v1/transaction":{"id":1,"amount":2500,"status":"pending"}}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1/transactions/1`);

const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }) };
const defaults = {
  agent,
  responseType: 'text',
  throwHttpErrors: false,
  retry: { limit: 0 },
  timeout: { request: 10_000 },
  followRedirect: false,
  headers: { accept: 'application/json', 'x-version': 'v1' },
} as const;
const instance = got.extend(defaults);
const prebuilt = new Options({ ...defaults, headers: { ...defaults.headers, authorization: 'Bearer sk_sandbox_x' } });
const bareAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const bare = () =>
  new Promise<void>((resolve, reject) => {
    http
      .get(url, { agent: bareAgent, headers: { authorization: 'Bearer sk_sandbox_x', accept: 'application/json' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(void JSON.parse(body)));
      })
      .on('error', reject);
  });

const gotTransport = createGotTransport({ timeoutMs: 10_000 });
const nodeTransport = createNodeTransport({ timeoutMs: 10_000 });
const sent: TransportRequest = { route: 'GET /v1/transactions/:id', method: 'GET', headers: { authorization: 'Bearer sk_sandbox_x' }, timeoutMs: 5000 };

const rows: [string, () => Promise<unknown>][] = [
  ['bare http.get (keep-alive)', bare],
  ['got, options per call', () => instance(url, { method: 'GET', headers: { authorization: 'Bearer sk_sandbox_x' }, timeout: { request: 5000 } })],
  ['got, URL only', () => instance(url)],
  // got's typings do not list the (url, undefined, defaults) form it implements.
  ['got, prebuilt Options', () => (got as unknown as (u: URL, o: undefined, d: Options) => Promise<unknown>)(url, undefined, prebuilt)],
  ['transport, got (default)', () => gotTransport.send(url, sent)],
  ['transport, node', () => nodeTransport.send(url, sent)],
];

async function measure(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 500; i++) await fn();
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, fn));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / CALLS;
}

console.log(`Node ${process.version}; ${CALLS} calls per row, ${CONCURRENCY} at a time; CPU ms per call, client and server together; best of 3 rounds`);
const best = new Map<string, number>();
for (let round = 0; round < 3; round++) {
  for (const [name, fn] of rows) best.set(name, Math.min(best.get(name) ?? Infinity, await measure(fn)));
}
const floor = best.get(rows[0]![0])!;
for (const [name] of rows) console.log(`${name.padEnd(28)} ${best.get(name)!.toFixed(3)} ms  (${(best.get(name)! / floor).toFixed(1)}x bare)`);
server.close();
bareAgent.destroy();
agent.http.destroy();
gotTransport.close();
nodeTransport.close();
