/**
 * Upstream answer bytes in flight are bounded per key and in total, with
 * either transport: a key's concurrent huge pages are shed with
 * UPSTREAM_UNAVAILABLE (`reason: bytes_in_flight`, a retry hint) instead of
 * all being held at once, while another tenant's small read still succeeds;
 * and many tenants together cannot pass the total. A proxy in front of the
 * emulator sends each answer's headers and first half at once and the rest a
 * moment later, so that concurrent reads really are in flight together.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_CLIENTS } from '../../src/upstream/index.js';
import { factories } from '../support/factories.js';
import { newKey, startGatewayOver, startStack, type GatewayOnly, type GqlResult, type Stack } from '../support/harness.js';

const MiB = 1024 * 1024;
/** 10 transactions of 150 KB metadata: a page of about 1.5 MB, so a key's 2 MiB holds one and no more. */
const PAGE = '{ transactions(first: 10) { nodes { id } } }';
const SMALL = '{ transactions(first: 1) { nodes { id } } }';

async function bigAccount(stack: Stack, label: string): Promise<string> {
  const key = newKey(label);
  const make = factories(stack.emulator, key);
  for (let i = 0; i < 10; i++) await make.transaction({ custom_metadata: { note: 'm'.repeat(150_000) } });
  return key;
}

/** Forwards to `target`; each answer's second half is held back `holdMs`. */
async function startSlowProxy(target: string, holdMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const out = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const half = Math.floor(body.length / 2);
        // Told its length, as the emulator no longer does for an answer it streams (a MiB or more): the gateway
        // reserves a told length whole at the headers, so pages arriving together meet the total at once.
        const { 'transfer-encoding': _chunked, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(body.length) });
        res.write(body.subarray(0, half));
        setTimeout(() => res.end(body.subarray(half)), holdMs);
      });
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const shed = (r: GqlResult<unknown>) => r.errors?.[0]?.extensions?.['reason'] === 'bytes_in_flight';
const served = (r: GqlResult<unknown>) => r.errors === undefined && (r.data as { transactions: { nodes: unknown[] } }).transactions.nodes.length > 0;

describe.each(HTTP_CLIENTS)('upstream bytes in flight (%s transport)', (httpClient) => {
  let stack: Stack;
  let proxy: Awaited<ReturnType<typeof startSlowProxy>>;
  let gateway: GatewayOnly;
  let big: string;
  let other: string;
  let third: string;
  let fourth: string;
  beforeAll(async () => {
    stack = await startStack();
    proxy = await startSlowProxy(stack.emulator.url, 300);
    gateway = await startGatewayOver(proxy.url, {
      UPSTREAM_HTTP_CLIENT: httpClient,
      UPSTREAM_MAX_RESPONSE_BYTES: String(2 * MiB),
      UPSTREAM_BYTES_IN_FLIGHT_PER_KEY: String(2 * MiB),
      UPSTREAM_BYTES_IN_FLIGHT: String(4 * MiB),
      RATE_LIMIT_PER_MINUTE: '0',
      ENTITY_CACHE: 'false',
    });
    big = await bigAccount(stack, 'bytes-big');
    third = await bigAccount(stack, 'bytes-third');
    fourth = await bigAccount(stack, 'bytes-fourth');
    other = newKey('bytes-small');
    await factories(stack.emulator, other).transaction();
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await proxy?.close();
    await stack?.stop();
  });

  it('sheds one key\'s concurrent huge pages with a coded, retryable error; another tenant\'s small read succeeds', async () => {
    const results = await Promise.all([...Array.from({ length: 6 }, () => gateway.gql(PAGE, {}, big)), gateway.gql(SMALL, {}, other)]);
    const mine = results.slice(0, 6);
    const theirs = results[6]!;

    expect(theirs.errors).toBeUndefined();
    expect(served(theirs)).toBe(true);
    // Each of the six is either read whole or shed; never both pages of one key at once.
    expect(mine.every((r) => served(r) || shed(r))).toBe(true);
    expect(mine.filter(served).length).toBeGreaterThanOrEqual(1);
    const refused = mine.filter(shed);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.errors![0]!.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', reason: 'bytes_in_flight', retryAfterSeconds: 1 });
    // Nothing held once all is answered: the same page reads again.
    expect(served(await gateway.gql(PAGE, {}, big))).toBe(true);
  });

  it('holds all keys together to the total: three tenants\' huge pages, one each, do not all fit at once', async () => {
    const results = await Promise.all([big, third, fourth].map((key) => gateway.gql(PAGE, {}, key)));
    expect(results.every((r) => served(r) || shed(r))).toBe(true);
    // 4 MiB holds two pages of 1.5 MB, never three; each key's own share (2 MiB) would have let all three through.
    expect(results.filter(shed)).toHaveLength(1);
    expect(results.filter(served)).toHaveLength(2);
  });
});
