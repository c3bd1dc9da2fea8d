/**
 * `paymentEvent(after:)` refuses a malformed `after` before it listens to the
 * bus: a refused subscription must leave no listener behind.
 */
import { describe, expect, it } from 'vitest';
import { subscriptionResolvers } from '../../../src/resolvers/subscriptions.js';

describe('paymentEvent(after:) with a malformed after', () => {
  it('is BAD_USER_INPUT and never starts listening', async () => {
    let listening = 0;
    const ctx = { realtime: { events: () => ((listening += 1), (async function* () {})()) } };
    const subscribe = (subscriptionResolvers.Subscription as Record<string, { subscribe: (...args: unknown[]) => Promise<unknown> }>).paymentEvent!.subscribe;
    await expect(subscribe({}, { after: 'not-an-id' }, ctx, {})).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(listening).toBe(0);
  });
});
