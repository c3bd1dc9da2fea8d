/**
 * A callback subscription whose start throws (its context here; a throw from
 * graphql-js's subscribe() takes the same path): the router is answered 500
 * and told `complete`, and the key's live-stream slot is freed. The context is
 * made to throw through a module mock, the only way to reach that path from
 * outside; the gateway, emulator and stand-in router run as servers.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newKey } from '../support/harness.js';
import { startRealtimeStack, type RealtimeStack } from '../realtime/support.js';
import { startCallbackRouter, type CallbackRouter } from './callback-router.js';

const failing = vi.hoisted(() => ({ context: false }));
vi.mock('../../src/context.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/context.js')>();
  return {
    ...original,
    createContext: (...args: Parameters<typeof original.createContext>) => {
      if (failing.context) throw new Error('context failed (test)');
      return original.createContext(...args);
    },
    // A stream's context (a callback subscription's) is made by this one.
    createStreamContext: (...args: Parameters<typeof original.createStreamContext>) => {
      if (failing.context) throw new Error('context failed (test)');
      return original.createStreamContext(...args);
    },
  };
});

const PAYMENT_EVENT = 'subscription { paymentEvent { id type objectId } }';

describe('a callback subscription that fails to start', () => {
  let router: CallbackRouter;
  let stack: RealtimeStack;
  beforeAll(async () => {
    router = await startCallbackRouter();
    stack = await startRealtimeStack({ env: { SUBSCRIPTION_CALLBACK_URLS: router.url, WS_MAX_SUBSCRIPTIONS_PER_KEY: '1' } });
  });
  afterAll(async () => {
    failing.context = false;
    await stack?.stop();
    await router?.close();
  });

  it('answers 500, completes the id the router registered, and frees the key\'s slot', async () => {
    const graphql = `http://127.0.0.1:${stack.gateway.port}/graphql`;
    const key = newKey('cb-throw');
    const registration = router.register();
    failing.context = true;
    const answer = await router.subscribe(graphql, key, PAYMENT_EVENT, registration);
    failing.context = false;
    expect(answer.status).toBe(500);
    expect(answer.body.errors?.[0]).toMatchObject({ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(JSON.stringify(answer.body)).not.toContain('context failed');
    expect(router.messages(registration.subscriptionId).map((m) => m.action)).toEqual(['check', 'complete']);
    // The one slot this key has (WS_MAX_SUBSCRIPTIONS_PER_KEY=1) is free again.
    const next = router.register();
    expect((await router.subscribe(graphql, key, PAYMENT_EVENT, next)).status).toBe(200);
    router.drop(next.subscriptionId);
  });
});
