/**
 * The idempotency store is a shared pool: many tenants at their quota fill it,
 * and a bystander's keyed mutation still runs (the heaviest tenant's oldest
 * finished record makes room), while each record keeps only what a replay
 * needs to give the same answer again. Gateway and emulator run as servers,
 * with small configured bounds so the flood is quick.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { codes, post, type Answer } from '../resilience/support.js';
import { withoutCost } from '../support/answers.js';

const CREATE = `mutation ($input: CreateTransactionInput!, $key: String) {
  createTransaction(input: $input, idempotencyKey: $key) { transaction { id description customMetadata } userErrors { code } }
}`;
type Created = { createTransaction: { transaction: { id: string; description: string; customMetadata: Record<string, unknown> | null } | null } };

/** About `chars` characters of metadata, echoed back by the payments API in the transaction. */
const metadata = (chars: number, tag: string) => ({ tag, lines: Array.from({ length: Math.ceil(chars / 100) }, (_, i) => `${tag}-${i}-`.padEnd(100, 'x')) });
const input = (description: string, meta: object) => ({ amount: 1000, description, currency: { iso: 'XOF' }, customMetadata: meta });

describe('a full idempotency store never locks out a bystander', () => {
  let stack: Stack;
  beforeAll(async () => {
    // 64 KiB in all, 16 KiB per caller: five tenants at their quota hold more than the store.
    stack = await startStack({
      env: { IDEMPOTENCY_MAX_BYTES: '65536', IDEMPOTENCY_CALLER_MAX_BYTES: '16384', IDEMPOTENCY_RECORD_MAX_BYTES: '8192', RATE_LIMIT_PER_MINUTE: '0' },
    });
  });
  afterAll(() => stack.stop());

  const create = (apiKey: string, key: string, description: string, meta: object) =>
    post<Created>(stack.gateway.url, CREATE, { input: input(description, meta), key }, apiKey);

  it('tenants flooding keyed creates with big metadata, then a bystander\'s keyed create runs and its retry replays', async () => {
    const tenants = Array.from({ length: 8 }, (_, i) => newKey(`busy${i}`));
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(tenants.map((t, i) => create(t, `flood-${round}`, `t${i} r${round}`, metadata(20_000, `t${i}r${round}`))));
      for (const answer of answers) expect(codes(answer)).toEqual([]);
    }

    const bystander = newKey('bystander');
    const meta = metadata(20_000, 'bystander');
    const first = await create(bystander, 'pay-1', 'bystander order', meta);
    expect(codes(first)).toEqual([]);
    expect(first.data!.createTransaction.transaction!.customMetadata).toEqual(meta);

    await stack.resetCounts();
    const retry = await create(bystander, 'pay-1', 'bystander order', meta);
    expect(withoutCost(retry)).toEqual(withoutCost(first));
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });

  it('the newest records of the tenants at their quota still replay: only the heaviest\'s oldest made room', async () => {
    const tenant = newKey('steady');
    const answers: Answer<Created>[] = [];
    for (let i = 0; i < 3; i++) answers.push(await create(tenant, `steady-${i}`, `steady ${i}`, metadata(20_000, `s${i}`)));
    await stack.resetCounts();
    const replay = await create(tenant, 'steady-2', 'steady 2', metadata(20_000, 's2'));
    expect(withoutCost(replay)).toEqual(withoutCost(answers[2]!));
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });
});

describe('a result too large to keep', () => {
  let stack: Stack;
  beforeAll(async () => {
    // 1 KiB per record: a transaction's own fields are more than that, even with its metadata left out.
    stack = await startStack({ env: { IDEMPOTENCY_RECORD_MAX_BYTES: '1024', RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('keeps the key taken: the retry is told it succeeded, and nothing is sent twice', async () => {
    const apiKey = newKey('big');
    const send = () => post<Created>(stack.gateway.url, CREATE, { input: input('big result', metadata(2_000, 'big')), key: 'big-1' }, apiKey);
    const first = await send();
    expect(codes(first)).toEqual([]);
    await stack.resetCounts();
    const retry = await send();
    expect(codes(retry)).toEqual(['IDEMPOTENCY_RESULT_NOT_KEPT']);
    expect(await stack.upstreamCalls('POST /v1/transactions')).toBe(0);
  });
});
