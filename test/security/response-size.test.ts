/** A 4.5 KB query must not build hundreds of MB: priced before it runs, bounded text, a capped answer. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('attack: 100 aliases of logs(first: 100) { nodes { response } }', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0', MAX_ALIASES: '100' } });
  });
  afterAll(() => stack.stop());

  it('is refused as too costly, with no upstream call and a small answer, even with the alias limit raised', async () => {
    const key = newKey('logs');
    const query = `{ ${Array.from({ length: 100 }, (_, i) => `l${i}: logs(first: 100) { nodes { response } }`).join(' ')} }`;
    expect(query.length).toBeLessThan(5_000);
    await stack.resetCounts();
    const res = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    });
    const text = await res.text();
    expect(JSON.parse(text).errors[0].extensions).toMatchObject({ code: 'OPERATION_TOO_COSTLY', limit: 1000 });
    expect(text.length).toBeLessThan(1_000);
    expect(await stack.upstreamCalls()).toBe(0);
  });
});

describe('bounded text and a capped answer', () => {
  let stack: Stack;
  const key = newKey('size');
  beforeAll(async () => {
    stack = await startStack({ env: { MAX_LOG_TEXT_CHARS: '100', MAX_RESPONSE_BYTES: '10000', RATE_LIMIT_PER_MINUTE: '0' } });
    // Logged requests carry their bodies: a long description makes long log bodies.
    const make = factories(stack.emulator, key);
    for (let i = 0; i < 20; i++) await make.transaction({ description: 'x'.repeat(900) });
  });
  afterAll(() => stack.stop());

  it('cuts Log.body to MAX_LOG_TEXT_CHARS with a marker', async () => {
    const res = await stack.gql<{ logs: { nodes: { body: string | null }[] } }>('{ logs(first: 5) { nodes { body } } }', {}, key);
    expect(res.errors).toBeUndefined();
    const long = res.data!.logs.nodes.map((n) => n.body).filter((b): b is string => b !== null && b.includes('truncated'));
    expect(long.length).toBeGreaterThan(0);
    for (const body of long) expect(body).toMatch(/^.{100}…\[truncated \d+ characters\]$/s);
  });

  it('an answer over MAX_RESPONSE_BYTES becomes one RESPONSE_TOO_LARGE error; one under it is sent whole', async () => {
    const small = await stack.gql('{ transactions(first: 5) { nodes { id description } } }', {}, key);
    expect(small.errors).toBeUndefined();
    const big = await stack.gql('{ transactions(first: 20) { nodes { id description } } }', {}, key);
    expect(big.data ?? null).toBeNull();
    expect(big.errors).toEqual([expect.objectContaining({ extensions: { code: 'RESPONSE_TOO_LARGE', limit: 10000, requestId: expect.any(String) } })]);
  });
});
