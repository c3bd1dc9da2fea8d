/**
 * A page refused for its size (413, or a 503 naming `page_too_large`) is its key's failure: the
 * key's breaker takes it, the route's shared breaker never opens for the other tenants.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamResponseTooLargeError, UpstreamUnavailableError } from '../../../src/upstream/errors.js';
import { ENDPOINTS } from '../../../src/upstream/endpoints.js';
import { aTransaction, enveloped } from '../../upstream/fixtures.js';
import { setup } from './fake-calls.js';

const HEAVY = ['sk_test_heavy_a', 'sk_test_heavy_b', 'sk_test_heavy_c'];
const refusals = [
  { statusCode: 413, headers: {}, body: '{"code":"page_too_large","message":"page over 67108864 bytes","max_bytes":67108864}' },
  { statusCode: 503, headers: {}, body: '{"code":"page_too_large","message":"page over the emulator heap share"}' },
];
const fivePage = JSON.stringify({ ...enveloped('transactions', Array.from({ length: 5 }, (_, i) => aTransaction({ id: i + 1 }))), meta: { current_page: 1, per_page: 5 } });

describe('size failures', () => {
  it.each(refusals.map((r) => [r.statusCode, r] as const))('%s: the heavy keys are refused by their own breakers, a bystander on the route never', async (_, refusal) => {
    const calls = setup(() => async (request) => (request.headers.authorization === 'Bearer sk_test_bystander' ? { statusCode: 200, headers: {}, body: fivePage } : refusal), {
      resilience: { breaker: { ...{ volumeThreshold: 5, errorThresholdPercentage: 50 } } as never },
    });
    const list = (apiKey: string) => calls.calls.call(calls.caller(apiKey), ENDPOINTS.transactions.list, [{ perPage: 5 }]);
    const outcomes = new Map<string, string[]>();
    for (let round = 0; round < 40; round++) {
      for (const key of [...HEAVY, 'sk_test_bystander']) {
        const got = await list(key).then(
          () => 'ok',
          (e: unknown) => (e instanceof UpstreamResponseTooLargeError ? 'too_large' : e instanceof UpstreamUnavailableError ? e.reason : String(e)),
        );
        outcomes.set(key, [...(outcomes.get(key) ?? []), got]);
        calls.clock.now += 50;
      }
    }
    expect(new Set(outcomes.get('sk_test_bystander'))).toEqual(new Set(['ok']));
    for (const key of HEAVY) {
      expect(outcomes.get(key)).toContain('too_large');
      // The key's own breaker took it: later calls are refused before any I/O.
      expect(outcomes.get(key)).toContain('circuit_open');
    }
    expect(calls.guards.of('GET /v1/transactions').breaker.opened).toBe(false);
  });
});
