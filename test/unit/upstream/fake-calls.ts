/**
 * UpstreamCalls over a fake transport, a clock the test moves and a random
 * source it sets (test/unit/upstream/call*.test.ts).
 */
import { afterEach } from 'vitest';
import { UpstreamCalls, type CallingKey } from '../../../src/upstream/call.js';
import type { ByteBudget } from '../../../src/upstream/byte-budget.js';
import type { DecodeMemo } from '../../../src/upstream/decode-memo.js';
import type { DecodeTurns } from '../../../src/upstream/decode-turns.js';
import { ENDPOINTS } from '../../../src/upstream/endpoints.js';
import type { OperationScope } from '../../../src/upstream/operation-scope.js';
import { DEFAULT_RESILIENCE, RouteGuards, type ResilienceOptions } from '../../../src/upstream/resilience.js';
import type { Transport, TransportRequest, TransportResponse } from '../../../src/upstream/transport.js';
import { aTransaction, enveloped } from '../../upstream/fixtures.js';

export const ROUTE = 'GET /v1/transactions/:id';
export const OK: TransportResponse = { statusCode: 200, headers: {}, body: JSON.stringify(enveloped('transaction', aTransaction())) };
export const status = (statusCode: number, headers: TransportResponse['headers'] = {}): TransportResponse => ({ statusCode, headers, body: '{}' });

export type Answer = TransportResponse | ((request: TransportRequest) => Promise<TransportResponse>);

export interface Setup {
  calls: UpstreamCalls;
  guards: RouteGuards;
  sent: (TransportRequest & { key: string; url: string })[];
  clock: { now: number };
  retrieve(apiKey?: string, scope?: Partial<OperationScope>): Promise<unknown>;
  caller(apiKey?: string, scope?: Partial<OperationScope>): CallingKey;
}

const open: RouteGuards[] = [];
afterEach(() => {
  for (const g of open.splice(0)) g.close();
});

export function setup(answer: (n: number) => Answer, options: { resilience?: Partial<ResilienceOptions>; random?: number; callTimeoutMs?: number; memo?: DecodeMemo; bytes?: ByteBudget; turns?: DecodeTurns } = {}): Setup {
  const sent: Setup['sent'] = [];
  const transport: Transport = {
    async send(url, request) {
      sent.push({ ...request, key: request.headers.authorization ?? '', url: url.href });
      const a = answer(sent.length);
      return typeof a === 'function' ? a(request) : a;
    },
    close() {},
  };
  const guards = new RouteGuards({ retry: { ...DEFAULT_RESILIENCE.retry, ...options.resilience?.retry }, breaker: { ...DEFAULT_RESILIENCE.breaker, ...options.resilience?.breaker } });
  open.push(guards);
  const clock = { now: 1_000_000 };
  const calls = new UpstreamCalls({
    transport,
    guards,
    baseUrl: new URL('http://upstream.test/'),
    callTimeoutMs: options.callTimeoutMs ?? 1_000,
    memo: options.memo,
    bytes: options.bytes,
    turns: options.turns,
    random: () => options.random ?? 0,
    now: () => clock.now,
  });
  const caller = (apiKey = 'sk_test_one', scope: OperationScope = {}): CallingKey => ({ apiKey, scope });
  const retrieve = (apiKey = 'sk_test_one', scope: OperationScope = {}) => calls.call(caller(apiKey, scope), ENDPOINTS.transactions.retrieve, [101]);
  return { calls, guards, sent, clock, retrieve, caller };
}

