/**
 * Identical unkeyed sendTransactions running at once are one send: eight of
 * them for one transaction, from one caller, prompt the payer's phone once.
 * Gateway and emulator as servers; the emulator counts the sends.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { post } from './support.js';
import { withoutCost } from '../support/answers.js';

const SEND = `mutation ($id: ID!, $number: String!) {
  sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: $number, country: "BJ" }) {
    transaction { id } paymentIntents { status mode transactionKey createdAt } userErrors { field code }
  }
}`;
const TOKEN_ROUTE = 'POST /v1/transactions/:id/token';
const SEND_ROUTE = 'POST /v1/transactions/:mode';

describe('unkeyed sendTransaction in flight', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());
  beforeEach(async () => {
    await stack.admin('DELETE', '/_emulator/faults');
    // The token and the send take a while upstream, so the eight calls are surely in flight together.
    for (const route of [TOKEN_ROUTE, SEND_ROUTE]) await stack.admin('POST', '/_emulator/faults', { route, latencyMs: 300 });
    await stack.resetCounts();
  });

  const send = (key: string, id: number, number = '64000001') => post(stack.gateway.url, SEND, { id: String(id), number }, key);

  it('makes one upstream send for eight identical ones at once, and gives all eight the same answer', async () => {
    const key = newKey('coalesce');
    const transaction = await factories(stack.emulator, key).transaction();
    await stack.resetCounts();

    const answers = await Promise.all(Array.from({ length: 8 }, () => send(key, transaction.id)));

    expect(answers[0]!.errors).toBeUndefined();
    expect(answers[0]!.data).toMatchObject({ sendTransaction: { paymentIntents: [{ status: 'PENDING', mode: 'mtn' }], userErrors: [] } });
    for (const answer of answers) expect(withoutCost(answer)).toEqual(withoutCost(answers[0]!));
    expect(await stack.upstreamCalls(SEND_ROUTE)).toBe(1);
    expect(await stack.upstreamCalls(TOKEN_ROUTE)).toBe(1);

    // Only while in flight: a send after the first settled runs again (nothing was kept), and the
    // upstream, no longer pending, refuses its token.
    const later = await send(key, transaction.id);
    expect(later.data).toMatchObject({ sendTransaction: { paymentIntents: [], userErrors: [{ code: 'INVALID_STATE' }] } });
    expect(await stack.upstreamCalls(TOKEN_ROUTE)).toBe(2);
  });

  it('does not join sends of two transactions or of two phone numbers', async () => {
    const key = newKey('coalesce');
    const [t1, t2] = [await factories(stack.emulator, key).transaction(), await factories(stack.emulator, key).transaction()];
    await stack.resetCounts();

    const answers = await Promise.all([send(key, t1.id), send(key, t2.id), send(key, t1.id, '64000002')]);

    for (const answer of answers) expect(answer.errors).toBeUndefined();
    expect(await stack.upstreamCalls(SEND_ROUTE)).toBe(3);
  });

  // The same arguments from two callers: joined, the second would get the first one's answer and
  // ride on its send. Each key is its own account, so the second caller's own run finds no such
  // transaction, which is how the test tells the two runs apart.
  it('does not join the same send of two callers', async () => {
    const key = newKey('coalesce');
    const otherKey = newKey('coalesce-other');
    const transaction = await factories(stack.emulator, key).transaction();
    await stack.resetCounts();

    const [mine, theirs] = await Promise.all([send(key, transaction.id), send(otherKey, transaction.id)]);

    expect(mine.data).toMatchObject({ sendTransaction: { transaction: { id: String(transaction.id) }, paymentIntents: [{ mode: 'mtn' }], userErrors: [] } });
    expect(theirs.data).toMatchObject({ sendTransaction: { transaction: null, paymentIntents: [], userErrors: [{ field: ['id'], code: 'NOT_FOUND' }] } });
    expect(await stack.upstreamCalls(TOKEN_ROUTE)).toBe(2);
    expect(await stack.upstreamCalls(SEND_ROUTE)).toBe(1);
  });
});
