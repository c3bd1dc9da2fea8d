/**
 * Apollo usage reporting: off for a subgraph (the router reports), on with
 * APOLLO_USAGE_REPORTING=true, sent to a stand-in for Apollo's ingress when
 * the gateway stops (it flushes its last report then).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { startGateway } from '../../src/server/index.js';
import { createUpstreamClient } from '../../src/upstream/index.js';
import { newKey } from '../support/harness.js';
import { jit } from '../support/jit-spy.js';

// Usage reports time every field, which a query compiled by graphql-jit would not let them see.
vi.mock('graphql-jit', (real) => import('../support/jit-spy.js').then((spy) => spy.spiedGraphqlJit(real)));

interface Report {
  apiKey: string | undefined;
  body: string;
}

const APOLLO = { APOLLO_KEY: 'service:payments-test:0123456789abcdef', APOLLO_GRAPH_REF: 'payments-test@current' };

let ingress: http.Server | null = null;
let emulator: RunningEmulator | null = null;

afterEach(async () => {
  await emulator?.stop();
  emulator = null;
  await new Promise<void>((r) => (ingress ? ingress.close(() => r()) : r()));
  ingress = null;
});

async function runOnce(env: Record<string, string>): Promise<Report[]> {
  const reports: Report[] = [];
  ingress = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      reports.push({ apiKey: req.headers['x-api-key'] as string | undefined, body: body.toString('latin1') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => ingress!.listen(0, '127.0.0.1', r));
  emulator = await startEmulator({ port: 0, settleMs: 50 });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'silent', ...env });
  const upstream = createUpstreamClient({ baseUrl: emulator.url });
  const gateway = await startGateway({
    config,
    upstream,
    logger: createLogger('silent'),
    apolloReportingUrl: `http://127.0.0.1:${(ingress.address() as AddressInfo).port}/api/ingress/traces`,
  });
  const key = newKey('apollo');
  const res = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: 'query CurrencyList { currencies { iso } }' }),
  });
  expect(res.status).toBe(200);
  await gateway.stop();
  upstream.close();
  for (const report of reports) expect(report.body).not.toContain(key);
  return reports;
}

describe('Apollo usage reporting', () => {
  it('reports the operation, with the graph key and no caller key, when this server is the whole graph', async () => {
    const compiled = jit.compiled;
    const reports = await runOnce({ ...APOLLO, APOLLO_USAGE_REPORTING: 'true' });
    // graphql-js ran it, so the report could time its fields.
    expect(jit.compiled).toBe(compiled);
    expect(reports.length).toBeGreaterThan(0);
    expect(reports[0]!.apiKey).toBe(APOLLO.APOLLO_KEY);
    expect(reports.map((r) => r.body).join('')).toContain('CurrencyList');
  });

  it('leaves reporting to the router by default, even with a key', async () => {
    const compiled = jit.compiled;
    expect(await runOnce(APOLLO)).toEqual([]);
    expect(jit.compiled).toBe(compiled + 1);
  });
});
