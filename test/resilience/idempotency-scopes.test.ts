/**
 * Keyed mutations where the key alone would mislead: a mutation that makes
 * two upstream writes must not send one key for both (an upstream that keeps
 * keys per account would answer the second with the first's answer), and one
 * key used for two different mutations with the same arguments is a reused
 * key, not a replay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { emulatorAdmin, newKey, startGatewayOver, startStack, type GatewayOnly, type Stack } from '../support/harness.js';
import { startKeyReplayingUpstream, type KeyReplayingUpstream } from '../support/key-replaying-upstream.js';
import { withoutCost } from '../support/answers.js';
import { codes, post } from './support.js';

const SEND = `mutation ($id: ID!, $key: String) {
  sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }, idempotencyKey: $key) {
    paymentIntents { status mode } userErrors { code message } } }`;

describe('a keyed sendTransaction over an upstream that keeps idempotency keys per account', () => {
  let emulator: RunningEmulator;
  let proxy: KeyReplayingUpstream;
  let gateway: GatewayOnly;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, settleMs: 50, latencyMs: 0 });
    proxy = await startKeyReplayingUpstream(emulator.url);
    gateway = await startGatewayOver(proxy.url);
  });
  afterAll(async () => {
    await gateway?.stop();
    await proxy?.close();
    await emulator?.stop();
  });

  it('prompts the payer: the token and the send go out under keys of their own, and a retry replays without a second prompt', async () => {
    const apiKey = newKey('scoped');
    const t = await factories(emulator, apiKey).transaction({ amount: 4100 });
    await emulatorAdmin(emulator.url)('DELETE', '/_emulator/stats');
    const sends = async () => ((await emulatorAdmin(emulator.url)('GET', '/_emulator/stats')) as { routes: Record<string, number> }).routes['POST /v1/transactions/:mode'] ?? 0;

    const first = await post<{ sendTransaction: { paymentIntents: { status: string; mode: string }[]; userErrors: unknown[] } }>(gateway.gateway.url, SEND, { id: String(t.id), key: 'checkout-41' }, apiKey);
    expect(first.errors).toBeUndefined();
    expect(first.data!.sendTransaction).toEqual({ paymentIntents: [{ status: 'PENDING', mode: 'mtn' }], userErrors: [] });
    expect(proxy.replayed).toEqual([]);
    expect(await sends()).toBe(1);

    const retry = await post(gateway.gateway.url, SEND, { id: String(t.id), key: 'checkout-41' }, apiKey);
    // The same answer; its cost differs, as a replay makes no upstream call.
    expect(withoutCost(retry)).toEqual(withoutCost(first));
    expect(await sends()).toBe(1);
  });
});

describe('one idempotency key on two different mutations with the same arguments', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ emulator: { latencyMs: 0 } });
  });
  afterAll(() => stack.stop());

  it('refuses the second mutation with IDEMPOTENCY_KEY_REUSED and sends it nowhere, rather than answering the first one\'s result', async () => {
    const apiKey = newKey('two-fields');
    const t = await factories(stack.emulator, apiKey).transaction();
    const cancel = await post<{ cancelTransaction: { transaction: { status: string } | null } }>(
      stack.gateway.url,
      'mutation ($id: ID!, $key: String) { cancelTransaction(id: $id, idempotencyKey: $key) { transaction { status } userErrors { code } } }',
      { id: String(t.id), key: 'order-77' },
      apiKey,
    );
    expect(cancel.data!.cancelTransaction.transaction).toEqual({ status: 'CANCELED' });
    await stack.resetCounts();

    const token = await post<{ createTransactionToken: unknown }>(
      stack.gateway.url,
      'mutation ($id: ID!, $key: String) { createTransactionToken(id: $id, idempotencyKey: $key) { token url userErrors { code } } }',
      { id: String(t.id), key: 'order-77' },
      apiKey,
    );
    expect(codes(token)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(token.data?.createTransactionToken ?? null).toBeNull();
    expect(await stack.upstreamCalls()).toBe(0);
  });
});
