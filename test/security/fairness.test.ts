/** One caller cannot starve the others: per-key shares of a slow route, and per-key rate limits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const SLOW_MS = 200;

/**
 * The victim's single read while the flooder keeps a slow route busy, against
 * the same read alone; and how long the flood itself took, to show the route
 * really was saturated.
 */
async function victimSlowdown(callerShare: string): Promise<{ ratio: number; alone: number; flood: number }> {
  const stack = await startStack({
    // Every read must reach the slow route: no customer from the entity cache.
    env: { UPSTREAM_ROUTE_CONCURRENCY: '8', UPSTREAM_CALLER_SHARE: callerShare, RATE_LIMIT_PER_MINUTE: '0', MAX_ALIASES: '30', CUSTOMER_CACHE_TTL_MS: '0' },
  });
  try {
    const flooder = newKey('flooder');
    const victim = newKey('victim');
    const floodIds: number[] = [];
    // 160 distinct customers: reads of one object by one key are shared across operations, so a flood of the same ten
    // would make ten calls, not 160.
    const make = factories(stack.emulator, flooder);
    for (let i = 0; i < 160; i++) floodIds.push((await make.customer()).id);
    const victimId = (await factories(stack.emulator, victim).customer()).id;
    await stack.admin('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', latencyMs: SLOW_MS });
    const read = async () => {
      const started = Date.now();
      const res = await stack.gql(`{ customer(id: "${victimId}") { email } }`, {}, victim);
      expect(res.errors).toBeUndefined();
      return Date.now() - started;
    };
    await read(); // first request of a fresh gateway: cold
    const alone = await read();
    // The flooder's key is known good already, so its calls go out in parallel at once.
    await stack.gql(`{ customer(id: "${floodIds[0]}") { email } }`, {}, flooder);
    const flood = (ids: number[]) => `{ ${ids.map((id, i) => `c${i}: customer(id: "${id}") { email }`).join(' ')} }`;
    const floodStarted = Date.now();
    const floods = Array.from({ length: 16 }, (_, n) => stack.gql(flood(floodIds.slice(n * 10, n * 10 + 10)), {}, flooder));
    await new Promise((r) => setTimeout(r, 100));
    const during = await read();
    await Promise.all(floods);
    return { ratio: during / alone, alone, flood: Date.now() - floodStarted };
  } finally {
    await stack.stop();
  }
}

describe('fairness on a slow route', () => {
  it('a key flooding the route (160 reads, 8 slots) leaves another key\'s read within 3x of its latency alone', async () => {
    const { ratio, alone, flood } = await victimSlowdown('0.5');
    // The flood held the route for many rounds: it was a real queue, not a passing burst.
    expect(flood).toBeGreaterThan(5 * alone);
    expect(ratio).toBeLessThan(3);
  }, 60_000);
});

describe('operations per key per minute', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(() => stack.stop());

  it('3 pass, the 4th is RATE_LIMITED with Retry-After before any parse, and another key does not notice', async () => {
    const key = newKey('rate');
    for (let i = 0; i < 3; i++) expect((await stack.gql('{ currencies { iso } }', {}, key)).errors).toBeUndefined();
    await stack.resetCounts();
    const res = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: '{ currencies { iso } }' }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
    expect(body.errors[0]).toMatchObject({ message: 'Too many operations for this API key; retry later.' });
    expect(await stack.upstreamCalls()).toBe(0);
    expect((await stack.gql('{ currencies { iso } }', {}, newKey('other'))).errors).toBeUndefined();
  });
});

describe('operations per key per minute, with a router secret configured', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '3', ROUTER_SHARED_SECRET: 'the-routers-own-secret-0123' } });
  });
  afterAll(() => stack.stop());

  it('limits a caller that sends an x-router-secret of its own making like any other', async () => {
    const key = newKey('router-pretender');
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-router-secret': 'made-up-by-the-caller-000' },
        body: JSON.stringify({ query: '{ currencies { iso } }' }),
      });
      statuses.push(res.status);
      await res.body?.cancel();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('operations of keys nobody has proven yet', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(() => stack.stop());

  it('fresh keys also spend their address budget: the 4th invented key from one address is RATE_LIMITED', async () => {
    const answers = [];
    let last: { errors?: { message: string }[] } = {};
    for (let i = 0; i < 4; i++) {
      const res = await fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${newKey(`invented-${i}`)}` },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      answers.push(res.status);
      last = (await res.json()) as typeof last;
    }
    expect(answers).toEqual([200, 200, 200, 429]);
    // The key has budget left: what ran out is its address's, and the message says so.
    expect(last.errors?.[0]?.message).toBe('Too many operations from this address; retry later.');
  });
});

describe('the client address behind a proxy', () => {
  const ask = (stack: Stack, forwardedFor: string) =>
    fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ query: '{ __typename }' }),
    }).then((r) => r.status);

  it('with TRUSTED_PROXIES, each forwarded client has its own budget', async () => {
    const stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '2', TRUSTED_PROXIES: 'loopback' } });
    try {
      expect([await ask(stack, '203.0.113.1'), await ask(stack, '203.0.113.1'), await ask(stack, '203.0.113.1')]).toEqual([200, 200, 429]);
      expect(await ask(stack, '203.0.113.2')).toBe(200);
    } finally {
      await stack.stop();
    }
  });

  it('without it, X-Forwarded-For is ignored: anyone could write it', async () => {
    const stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      expect([await ask(stack, '203.0.113.1'), await ask(stack, '203.0.113.2'), await ask(stack, '203.0.113.3')]).toEqual([200, 200, 429]);
    } finally {
      await stack.stop();
    }
  });
});
