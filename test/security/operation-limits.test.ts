/**
 * One small document must not cost the upstream much: every document limit
 * at its boundary (N passes, N + 1 refused before any upstream call), and the
 * attacks that motivated them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const aliases = (n: number, field: (i: number) => string) => `{ ${Array.from({ length: n }, (_, i) => field(i)).join(' ')} }`;

describe('operation limits', () => {
  let stack: Stack;
  const key = newKey('limits');
  let transactionId: string;

  beforeAll(async () => {
    stack = await startStack({
      env: { MAX_ALIASES: '5', MAX_OPERATION_COST: '60', MAX_QUERY_DEPTH: '4', MAX_QUERY_TOKENS: '400', MAX_MUTATION_FIELDS: '2', MAX_DIRECTIVES: '3', RATE_LIMIT_PER_MINUTE: '0' },
    });
    transactionId = String((await factories(stack.emulator, key).transaction()).id);
  });
  afterAll(() => stack.stop());

  const refusedWithoutUpstream = async (query: string, code: string) => {
    await stack.resetCounts();
    const res = await stack.gql(query, {}, key);
    expect(res.errors?.[0]?.extensions?.code).toBe(code);
    // A refusal of the request, like every document limit's: never a server error.
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).not.toHaveProperty('http');
    expect(res.data ?? null).toBeNull();
    expect(await stack.upstreamCalls()).toBe(0);
    return res;
  };

  it('aliases: 5 pass, 6 are refused', async () => {
    const five = await stack.gql(aliases(5, (i) => `t${i}: transaction(id: "${transactionId}") { id }`), {}, key);
    expect(five.errors).toBeUndefined();
    await refusedWithoutUpstream(aliases(6, (i) => `t${i}: transaction(id: "${transactionId}") { id }`), 'GRAPHQL_VALIDATION_FAILED');
  });

  it('directives: 3 pass, 4 are refused', async () => {
    const fields = ['id', 'status', 'description', 'createdAt'];
    const directives = (n: number) => `{ transaction(id: "${transactionId}") { ${fields.slice(0, n).map((f) => `${f} @include(if: true)`).join(' ')} } }`;
    expect((await stack.gql(directives(3), {}, key)).errors).toBeUndefined();
    await refusedWithoutUpstream(directives(4), 'GRAPHQL_VALIDATION_FAILED');
  });

  it('cost: 60 passes, 61 is refused with the cost and the limit', async () => {
    // A connection costs 1 + first x one node (the node's @cost weight, 1, plus its selection).
    const ok = await stack.gql('{ transactions(first: 59) { nodes { id } } }', {}, key);
    expect(ok.errors).toBeUndefined();
    const refused = await refusedWithoutUpstream('{ transactions(first: 60) { nodes { id } } }', 'OPERATION_TOO_COSTLY');
    expect(refused.errors![0]!.extensions).toMatchObject({ cost: 61, limit: 60 });
  });

  it('cost counts relations: a page with customer and currency costs 1 + first x (1 + 2)', async () => {
    const ok = await stack.gql('{ transactions(first: 19) { nodes { customer { email } currency { iso } } } }', {}, key);
    expect(ok.errors).toBeUndefined();
    const refused = await refusedWithoutUpstream('{ transactions(first: 20) { nodes { customer { email } currency { iso } } } }', 'OPERATION_TOO_COSTLY');
    expect(refused.errors![0]!.extensions).toMatchObject({ cost: 61 });
  });

  it('cost counts the payouts startPayouts reads first: 59 pass, 60 are refused', async () => {
    const START = 'mutation ($p: [StartPayoutInput!]!) { startPayouts(payouts: $p) { userErrors { code } } }';
    // Payouts that do not exist: each is read (NOT_FOUND), none started.
    const payouts = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(900_000 + i), phoneNumber: { number: '64000001', country: 'BJ' } }));
    const ok = await stack.gql<{ startPayouts: { userErrors: { code: string }[] } }>(START, { p: payouts(59) }, key);
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.startPayouts.userErrors).toHaveLength(59);
    await stack.resetCounts();
    const refused = await stack.gql(START, { p: payouts(60) }, key);
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'OPERATION_TOO_COSTLY', cost: 61, limit: 60 });
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('depth: 4 passes, 5 is refused', async () => {
    const four = await stack.gql(`{ transaction(id: "${transactionId}") { customer { phoneNumber { number } } } }`, {}, key);
    expect(four.errors).toBeUndefined();
    await refusedWithoutUpstream(
      `{ transactions(first: 1) { edges { node { customer { email } } } } }`,
      'GRAPHQL_VALIDATION_FAILED',
    );
  });

  it('tokens: a document over the limit is refused while parsing', async () => {
    const res = await refusedWithoutUpstream(`{ ${'__typename '.repeat(500)} }`, 'GRAPHQL_PARSE_FAILED');
    expect(res.errors![0]!.message).toMatch(/400 tokens/);
  });

  it('mutation fields: 2 pass, 3 are refused', async () => {
    const field = (i: number) => `m${i}: createCustomer(input: { firstname: "A", lastname: "B", email: "a${i}@example.com" }) { customer { id } }`;
    const two = await stack.gql(`mutation { ${[0, 1].map(field).join(' ')} }`, {}, key);
    expect(two.errors).toBeUndefined();
    const refused = await refusedWithoutUpstream(`mutation { ${[0, 1, 2].map(field).join(' ')} }`, 'OPERATION_TOO_COSTLY');
    expect(refused.errors![0]!.extensions).toMatchObject({ limit: 2, mutationFields: 3 });
  });
});

describe('attack: 10,000 aliases of one read in one 400 KB operation', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('is refused before execution under the default limits: no upstream call, /healthz answers at once', async () => {
    const key = newKey('aliases');
    const query = aliases(10_000, (i) => `t${i}: transaction(id: "1") { id }`);
    expect(query.length).toBeGreaterThan(300_000);
    const started = Date.now();
    const [res, health] = await Promise.all([
      stack.gql(query, {}, key),
      (async () => {
        const at = Date.now();
        await fetch(new URL('/healthz', stack.gateway.url));
        return Date.now() - at;
      })(),
    ]);
    expect(res.errors?.[0]?.extensions?.code).toMatch(/GRAPHQL_(PARSE|VALIDATION)_FAILED/);
    expect(await stack.upstreamCalls()).toBe(0);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(health).toBeLessThan(1_000);
  });

  it('explains a document graphql-js gives up validating (800 repeated fields), with no upstream call', async () => {
    const res = await stack.gql(`{ ${'__typename '.repeat(800)} }`, {}, newKey('repeated'));
    expect(res.status).toBe(400);
    expect(res.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^Validation aborted: the document is too costly to validate/), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(await stack.upstreamCalls()).toBe(0);
  });
});
