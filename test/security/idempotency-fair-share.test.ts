/**
 * The idempotency store is a shared pool: many tenants at their quota fill it,
 * and then new keyed mutations are refused (a bystander's too, nothing sent)
 * while every record already kept still replays: nothing is forgotten to make
 * room. Each record keeps only what a replay needs to give the same answer
 * again. Gateway and emulator run as servers, with small configured bounds so
 * the flood is quick.
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

describe('a full idempotency store refuses, and forgets nothing', () => {
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

  it('tenants flooding keyed creates with big metadata fill it; a bystander is refused, and every kept record replays', async () => {
    const tenants = Array.from({ length: 8 }, (_, i) => newKey(`busy${i}`));
    const kept: { tenant: string; key: string; description: string; meta: object; answer: Answer<Created> }[] = [];
    const refused: string[] = [];
    for (let round = 0; round < 12; round++) {
      const sent = tenants.map((tenant, i) => ({ tenant, key: `flood-${round}`, description: `t${i} r${round}`, meta: metadata(20_000, `t${i}r${round}`) }));
      const answers = await Promise.all(sent.map((s) => create(s.tenant, s.key, s.description, s.meta)));
      answers.forEach((answer, i) => (codes(answer).length === 0 ? kept.push({ ...sent[i]!, answer }) : refused.push(...codes(answer))));
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused)).toEqual(new Set(['IDEMPOTENCY_UNAVAILABLE']));

    await stack.resetCounts();
    const bystander = await create(newKey('bystander'), 'pay-1', 'bystander order', metadata(20_000, 'bystander'));
    expect(codes(bystander)).toEqual(['IDEMPOTENCY_UNAVAILABLE']);
    // Every tenant's create that ran replays (or is told its answer was not kept): none is sent again.
    for (const k of kept) {
      const retry = await create(k.tenant, k.key, k.description, k.meta);
      if (codes(retry).length > 0) expect(codes(retry)).toEqual(['IDEMPOTENCY_RESULT_NOT_KEPT']);
      else expect(withoutCost(retry)).toEqual(withoutCost(k.answer));
    }
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
