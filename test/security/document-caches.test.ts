/**
 * The caches of what callers send (parsed documents, queries compiled by
 * graphql-jit, prices) are bounded in bytes and give each caller a share,
 * replayed over HTTP: distinct documents each carrying a large string
 * literal, every one under the document limits, no longer stay compiled at
 * megabytes each; one key's flood pushes out its own entries, never another
 * key's; a document too large for a caller's share runs on graphql-js with
 * the same answer; automatic persisted queries are held to a share too. Small budgets (GRAPHQL_JIT_CACHE_BYTES,
 * GRAPHQL_DOCUMENT_CACHE_BYTES) keep the replay small.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compiledBytes } from '../../src/graphql/jit-executor.js';
import { documentBytes } from '../../src/limits/document-store.js';
import { newKey, startGatewayOver, startStack, type GatewayOnly, type Stack } from '../support/harness.js';
import { jit } from '../support/jit-spy.js';
import { heapUsed } from '../support/heap.js';

vi.mock('graphql-jit', (real) => import('../support/jit-spy.js').then((spy) => spy.spiedGraphqlJit(real)));

const MiB = 1024 * 1024;
const BUDGET = MiB;
const SHARE = 0.25;
const PER_CALLER = BUDGET * SHARE;


/** A distinct document per `i`, carrying a string literal of `chars` characters. */
const literalDocument = (i: number, chars: number) =>
  `query Flood${i} { transactions(first: 1, after: "${String(i).padStart(6, '0')}${'x'.repeat(chars)}") { totalCount } }`;
const MINE = 'query Mine { currencies { iso name } }';

async function cacheBytes(stack: Stack): Promise<Record<string, number>> {
  const text = await (await fetch(stack.gateway.metricsUrl!)).text();
  const bytes: Record<string, number> = {};
  for (const [, cache, value] of text.matchAll(/^gateway_graphql_cache_bytes\{cache="([a-z_]+)"\} (\d+)$/gm)) bytes[cache!] = Number(value);
  return bytes;
}

describe('caches of what callers send: bytes, and a share per caller', () => {
  let stack: Stack;
  let graphqlJs: GatewayOnly;
  const flooder = newKey('flooder');
  const other = newKey('other');

  beforeAll(async () => {
    const env = {
      GRAPHQL_JIT_CACHE_BYTES: String(BUDGET),
      GRAPHQL_DOCUMENT_CACHE_BYTES: String(BUDGET),
      GRAPHQL_CACHE_CALLER_SHARE: String(SHARE),
      RATE_LIMIT_PER_MINUTE: '0',
    };
    stack = await startStack({ env });
    graphqlJs = await startGatewayOver(stack.emulator.url, { ...env, GRAPHQL_JIT: 'false' });
    // Each key proven by the upstream first: a key not accepted lately shares one owner with every other.
    for (const key of [flooder, other]) expect((await stack.gql('{ currencies { iso } }', {}, key)).errors).toBeUndefined();
  });
  afterAll(async () => {
    await graphqlJs?.stop();
    await stack?.stop();
  });

  it("holds one key's flood of distinct documents to its share of each cache, and keeps another key's compiled query", async () => {
    expect((await stack.gql(MINE, {}, other)).errors).toBeUndefined();
    // A document of 1,000 characters of literal fits one caller's share, compiled; 40 of them do not.
    expect(compiledBytes(literalDocument(0, 1_000).length)).toBeLessThan(PER_CALLER);
    const compiled = jit.compiled;
    for (let i = 0; i < 40; i++) expect((await stack.gql(literalDocument(i, 1_000), {}, flooder)).status).toBe(200);
    expect(jit.compiled).toBe(compiled + 40);

    const bytes = await cacheBytes(stack);
    expect(bytes['compiled_queries']).toBeLessThanOrEqual(PER_CALLER + compiledBytes(MINE.length) + compiledBytes(30));
    expect(bytes['http_documents']).toBeLessThanOrEqual(PER_CALLER + documentBytes(MINE.length) + documentBytes(30));
    expect(bytes['operation_prices']).toBeGreaterThan(0);

    // The other key's query is still compiled: run again, not compiled again.
    const runs = jit.runs;
    const again = jit.compiled;
    expect((await stack.gql(MINE, {}, other)).errors).toBeUndefined();
    expect(jit.compiled).toBe(again);
    expect(jit.runs).toBe(runs + 1);
  });

  it("holds one key's automatic persisted queries to its share of the texts", async () => {
    const register = async (query: string) => {
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const res = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${flooder}` },
        body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
      });
      expect(res.status).toBe(200);
      await res.text();
    };
    // 40 texts of about 20 KB each: 800 KB, over one share (256 KiB), under the whole (1 MiB).
    for (let i = 0; i < 40; i++) await register(literalDocument(5_000 + i, 10_000));
    expect((await cacheBytes(stack))['persisted_queries']).toBeLessThanOrEqual(PER_CALLER);
    expect((await cacheBytes(stack))['persisted_queries']).toBeGreaterThan(PER_CALLER / 2);
  });

  it('runs a document too large for a caller share on graphql-js, uncompiled, answering as GRAPHQL_JIT=false does', async () => {
    const large = literalDocument(1_000, 50_000);
    expect(compiledBytes(large.length)).toBeGreaterThan(PER_CALLER);
    const attempts = jit.attempts;
    const compiledAnswer = await stack.gql(large, {}, flooder);
    const interpreted = await graphqlJs.gql(large, {}, flooder);
    expect(jit.attempts).toBe(attempts);
    // Each answer's request id is its own.
    const withoutId = (answer: unknown) => JSON.stringify(answer).replace(/"requestId":"[0-9a-f-]{36}"/g, '');
    expect(withoutId(compiledAnswer)).toBe(withoutId(interpreted));
    expect(compiledAnswer.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  });

  it('keeps no heap for a flood of 40 distinct documents of 200 KB literals', async () => {
    // Warm: the first document of this size grows buffers once.
    await stack.gql(literalDocument(2_000, 200_000), {}, flooder);
    const before = heapUsed();
    for (let i = 0; i < 40; i++) expect((await stack.gql(literalDocument(3_000 + i, 200_000), {}, flooder)).status).toBe(200);
    const growth = heapUsed() - before;
    // 8 MB was sent. Kept compiled and parsed, as before these bounds, it held about 40 MB.
    expect(growth).toBeLessThan(BUDGET + 4 * MiB);
  });
});
