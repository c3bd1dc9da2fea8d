import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { CREATE_PAYOUT, codes, payoutInput, payoutsWithReference, post } from './support.js';
import { withoutCost } from '../support/answers.js';

describe('idempotent mutations (one instance, records in memory)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ emulator: { latencyMs: 0 }, env: { IDEMPOTENCY_WAIT_MS: '3000' } });
  });
  afterAll(() => stack.stop());

  const create = (key: string, apiKey: string, amount = 700, ref = 'ref-1', headers: Record<string, string> = {}) =>
    post<{ createPayout: { payout: { id: string; amount: number } | null } }>(
      stack.gateway.url,
      CREATE_PAYOUT,
      { input: payoutInput(amount, ref), key },
      apiKey,
      headers,
    );

  it('answers a repeated key with the first result and calls the upstream once', async () => {
    const apiKey = newKey('idem');
    await stack.resetCounts();

    const first = await create('order-1', apiKey);
    const second = await create('order-1', apiKey);

    expect(first.errors).toBeUndefined();
    expect(withoutCost(second)).toEqual(withoutCost(first));
    expect(await stack.upstreamCalls('POST /v1/payouts')).toBe(1);
    expect(await payoutsWithReference(stack, apiKey, 'ref-1')).toBe(1);
  });

  it('refuses the same key with a different input, with IDEMPOTENCY_KEY_REUSED and no upstream call', async () => {
    const apiKey = newKey('idem');
    await create('order-2', apiKey, 700);
    await stack.resetCounts();

    const changed = await create('order-2', apiKey, 900);

    expect(codes(changed)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(changed.data).toBeNull();
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it('scopes keys by caller: two callers with one key each get their own payout', async () => {
    const [a, b] = [newKey('idem'), newKey('idem')];

    const [ra, rb] = [await create('shared-key', a), await create('shared-key', b)];

    expect(ra.data!.createPayout.payout!.id).not.toBe(rb.data!.createPayout.payout!.id);
    expect(await payoutsWithReference(stack, a, 'ref-1')).toBe(1);
    expect(await payoutsWithReference(stack, b, 'ref-1')).toBe(1);
  });

  it('makes concurrent duplicates wait for the first and share its answer', async () => {
    const apiKey = newKey('idem');
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/payouts', latencyMs: 300, times: 1 });
    await stack.resetCounts();

    const answers = await Promise.all(Array.from({ length: 8 }, () => create('burst', apiKey, 700, 'burst')));

    expect(answers[0]!.errors).toBeUndefined();
    for (const answer of answers) expect(withoutCost(answer)).toEqual(withoutCost(answers[0]!));
    expect(await stack.upstreamCalls('POST /v1/payouts')).toBe(1);
    expect(await payoutsWithReference(stack, apiKey, 'burst')).toBe(1);
  });

  it('takes the key from the Idempotency-Key header when the operation has one mutation field', async () => {
    const apiKey = newKey('idem');
    const query = `mutation ($input: PayoutInput!) { createPayout(input: $input) { payout { id } userErrors { code } } }`;
    const send = () => post(stack.gateway.url, query, { input: payoutInput(500, 'hdr') }, apiKey, { 'idempotency-key': 'hdr-1' });

    const [first, second] = [await send(), await send()];

    expect(withoutCost(second)).toEqual(withoutCost(first));
    expect(await payoutsWithReference(stack, apiKey, 'hdr')).toBe(1);
  });

  it('refuses the Idempotency-Key header on an operation with two mutation fields, before any upstream call', async () => {
    const apiKey = newKey('idem');
    const query = `mutation ($a: PayoutInput!, $b: PayoutInput!) {
      one: createPayout(input: $a) { payout { id } }
      two: createPayout(input: $b) { payout { id } }
    }`;
    await stack.resetCounts();

    const res = await post(stack.gateway.url, query, { a: payoutInput(1, 'x'), b: payoutInput(2, 'y') }, apiKey, { 'idempotency-key': 'two-fields' });

    // Mutations run in order and the payload is non-null: the first refusal ends the operation.
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors![0]!.message).toMatch(/single mutation field/);
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['with a space', 'a b'],
    ['too long', 'k'.repeat(201)],
  ])('refuses a key that is %s', async (_label, key) => {
    const res = await create(key, newKey('idem'));
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
  });

  it('releases the key after a system failure, so a retry with the same key runs once and succeeds', async () => {
    const apiKey = newKey('idem');
    // More failures than the client's attempts: the first request fails as a whole.
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/payouts', status: 500, times: 3 });

    const failed = await create('after-failure', apiKey, 700, 'retry');
    const changed = await create('after-failure', apiKey, 800, 'retry');
    const retried = await create('after-failure', apiKey, 700, 'retry');

    expect(codes(failed)).toEqual(['UPSTREAM_ERROR']);
    expect(codes(changed)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(retried.errors).toBeUndefined();
    expect(retried.data!.createPayout.payout!.amount).toBe(700);
    expect(await payoutsWithReference(stack, apiKey, 'retry')).toBe(1);
  });

  it('replays a userErrors answer too: it is a result, not a failure', async () => {
    const apiKey = newKey('idem');
    await stack.resetCounts();
    const bad = { ...payoutInput(700, 'bad'), currency: { iso: 'ZZZ' } };
    const send = () => post(stack.gateway.url, CREATE_PAYOUT, { input: bad, key: 'bad-input' }, apiKey);

    const [first, second] = [await send(), await send()];

    expect((first.data as { createPayout: { userErrors: unknown[] } }).createPayout.userErrors.length).toBeGreaterThan(0);
    expect(withoutCost(second)).toEqual(withoutCost(first));
    expect(await stack.upstreamCalls('POST /v1/payouts')).toBe(1);
  });
});

describe('a duplicate that outlasts its wait', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { IDEMPOTENCY_WAIT_MS: '100' } });
  });
  afterAll(() => stack.stop());

  it('gets IDEMPOTENCY_IN_PROGRESS while the first still runs, and the first result afterwards', async () => {
    const apiKey = newKey('idem');
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/payouts', latencyMs: 800, times: 1 });
    const send = () => post(stack.gateway.url, CREATE_PAYOUT, { input: payoutInput(700, 'slow'), key: 'slow' }, apiKey);

    const first = send();
    await new Promise((r) => setTimeout(r, 150));
    const duplicate = await send();
    const done = await first;
    const later = await send();

    expect(codes(duplicate)).toEqual(['IDEMPOTENCY_IN_PROGRESS']);
    expect(done.errors).toBeUndefined();
    expect(withoutCost(later)).toEqual(withoutCost(done));
    expect(await payoutsWithReference(stack, apiKey, 'slow')).toBe(1);
  });
});
