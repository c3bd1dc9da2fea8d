/**
 * What one upstream call sends and how it reads the answer (call.ts), over a
 * fake transport: headers, body and signal, the
 * observer of each attempt, the status to a typed error, each answer kind
 * decoded (a large one in turns, and priced), the bytes a lease holds, and
 * a key breaker's trial that ends without an outcome.
 */
import { describe, expect, it } from 'vitest';
import type { CallingKey } from '../../../src/upstream/call.js';
import { ByteBudget } from '../../../src/upstream/byte-budget.js';
import { createDecodeMemo, type DecodeMemo } from '../../../src/upstream/decode-memo.js';
import { SLICED_FROM_CHARS } from '../../../src/upstream/decode-sliced.js';
import type { DecodeTurns } from '../../../src/upstream/decode-turns.js';
import { ENDPOINTS } from '../../../src/upstream/endpoints.js';
import {
  UpstreamConnectionError,
  UpstreamInvalidResponseError,
  UpstreamNotFoundError,
  UpstreamParameterIgnoredError,
  UpstreamRouteMissingError,
  UpstreamServerError,
  UpstreamTimeoutError,
} from '../../../src/upstream/errors.js';
import { keyId } from '../../../src/upstream/key-id.js';
import { PRICED_FROM_CHARS } from '../../../src/upstream/operation-scope.js';
import type { AttemptResult, AttemptStart, UpstreamObserver } from '../../../src/upstream/observer.js';
import { DEFAULT_RESILIENCE } from '../../../src/upstream/resilience.js';
import type { TransportResponse } from '../../../src/upstream/transport.js';
import { Decimal } from '../../../src/upstream/decimal.js';
import { aCurrency, aPageMeta, aPaymentIntent, aPayout, aTransaction, enveloped } from '../../upstream/fixtures.js';
import { OK, ROUTE, setup, status } from './fake-calls.js';

const json = (value: unknown, headers: TransportResponse['headers'] = {}): TransportResponse => ({ statusCode: 200, headers, body: JSON.stringify(value) });
const ONE_ATTEMPT = { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 } } };
const call = (s: ReturnType<typeof setup>, caller: CallingKey, endpoint: { build: unknown }, ...args: unknown[]) => s.calls.call(caller, endpoint as never, args);

describe('the request', () => {
  it('sends the key, the request id and no body or signal on a plain read', async () => {
    const s = setup(() => OK);
    await s.retrieve('sk_test_one', { requestId: 'req-7' });
    const [sent] = s.sent;
    expect(sent!.url).toBe('http://upstream.test/v1/transactions/101');
    expect(sent!.method).toBe('GET');
    expect(sent!.route).toBe(ROUTE);
    expect(sent!.headers).toEqual({ authorization: 'Bearer sk_test_one', 'x-request-id': 'req-7' });
    expect('body' in sent!).toBe(false);
    expect('signal' in sent!).toBe(false);
  });

  it('sends no x-request-id without one', async () => {
    const s = setup(() => OK);
    await s.retrieve();
    expect(s.sent[0]!.headers).toEqual({ authorization: 'Bearer sk_test_one' });
  });

  it('sends a write its JSON body and its idempotency key, the same on every attempt', async () => {
    const s = setup((n) => (n === 1 ? status(503) : json(enveloped('payout', aPayout()))));
    await call(s, s.caller(), ENDPOINTS.payouts.create, { amount: Decimal.parse('500') as Decimal, currencyIso: 'XOF' }, { idempotencyKey: 'k-1' });
    expect(s.sent).toHaveLength(2);
    for (const sent of s.sent) {
      expect(sent.headers['idempotency-key']).toBe('k-1');
      expect(JSON.parse(sent.body!)).toMatchObject({ amount: 500, currency: { iso: 'XOF' } });
    }
  });

  it("passes the caller's signal, and the operation's, to the transport", async () => {
    const mine = new AbortController();
    const operation = new AbortController();
    const s = setup(() => OK);
    await call(s, s.caller('sk_test_one', { signal: operation.signal }), ENDPOINTS.transactions.retrieve, 101, { signal: mine.signal });
    await call(s, s.caller(), ENDPOINTS.transactions.retrieve, 101, { signal: mine.signal });
    await s.retrieve('sk_test_one', { signal: operation.signal });
    const [both, callOnly, operationOnly] = s.sent.map((r) => r.signal!);
    expect(callOnly).toBe(mine.signal);
    expect(operationOnly).toBe(operation.signal);
    expect(both).not.toBe(mine.signal);
    expect(both).not.toBe(operation.signal);
    operation.abort(new Error('operation over'));
    expect(both!.aborted).toBe(true);
  });

  it('sends nothing when either signal has aborted already', async () => {
    const reason = new Error('gone');
    const s = setup(() => OK);
    await expect(call(s, s.caller(), ENDPOINTS.transactions.retrieve, 101, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(s.retrieve('sk_test_one', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    const live = new AbortController();
    await expect(call(s, s.caller('sk_test_one', { signal: AbortSignal.abort(reason) }), ENDPOINTS.transactions.retrieve, 101, { signal: live.signal })).rejects.toBe(reason);
    expect(s.sent).toHaveLength(0);
  });

  it('does not retry an attempt whose caller aborted while it ran, whatever it answered', async () => {
    const controller = new AbortController();
    const s = setup(() => async () => {
      controller.abort(new Error('gone'));
      return status(503);
    });
    await expect(s.retrieve('sk_test_one', { signal: controller.signal })).rejects.toBeInstanceOf(UpstreamServerError);
    expect(s.sent).toHaveLength(1);
  });
});

describe('the observer', () => {
  function observed(s: ReturnType<typeof setup>) {
    const seen: { starts: AttemptStart[]; ends: AttemptResult[]; retries: string[]; exhausted: string[] } = { starts: [], ends: [], retries: [], exhausted: [] };
    const observer: UpstreamObserver = {
      attempt: (start) => (seen.starts.push(start), { headers: { traceparent: `t-${start.attempt}` }, end: (r) => void seen.ends.push(r) }),
      retry: (route) => void seen.retries.push(route),
      retryBudgetExhausted: (route) => void seen.exhausted.push(route),
    };
    s.calls.observer = observer;
    return seen;
  }

  it('watches each attempt, adds its headers, and hears each status and retry', async () => {
    const s = setup((n) => (n === 1 ? status(503) : OK));
    const seen = observed(s);
    await s.retrieve('sk_test_one', { observed: 'op-1' });
    expect(seen.starts).toEqual([
      { method: 'GET', pattern: '/v1/transactions/:id', attempt: 1, operation: 'op-1' },
      { method: 'GET', pattern: '/v1/transactions/:id', attempt: 2, operation: 'op-1' },
    ]);
    expect(s.sent.map((r) => r.headers.traceparent)).toEqual(['t-1', 't-2']);
    expect(seen.ends).toEqual([{ status: 503 }, { status: 200 }]);
    expect(seen.retries).toEqual([ROUTE]);
  });

  it.each([
    ['a status the transport refused', Object.assign(new UpstreamServerError({ route: ROUTE }), { statusCode: 502 }), { status: 502 }],
    ['a time-out', new UpstreamTimeoutError({ route: ROUTE, timeoutMs: 5 }), { failure: 'timeout' }],
    ['a connection failure', new UpstreamConnectionError({ route: ROUTE }), { failure: 'connection', reason: 'connection_failed' }],
    ['a refused connection', new UpstreamConnectionError({ route: ROUTE, systemCode: 'ECONNREFUSED' }), { failure: 'connection', reason: 'connection_refused' }],
    ['anything else', new Error('odd'), { failure: 'other' }],
    ['null', null, { failure: 'other' }],
  ])('names a failed exchange by its cause: %s', async (_label, thrown, result) => {
    const s = setup(() => () => Promise.reject(thrown), ONE_ATTEMPT);
    const seen = observed(s);
    // Whatever the transport rejects with is what the call rejects with.
    await expect(s.retrieve()).rejects.toBe(thrown);
    expect(seen.ends).toEqual([result]);
  });

  it('names an aborted exchange aborted', async () => {
    const controller = new AbortController();
    const s = setup(() => () => (controller.abort(new Error('gone')), Promise.reject(new Error('gone'))), ONE_ATTEMPT);
    const seen = observed(s);
    await s.retrieve('sk_test_one', { signal: controller.signal }).catch(() => undefined);
    expect(seen.ends).toEqual([{ failure: 'aborted' }]);
  });

  it('hears a retry the budget refused, and no retry', async () => {
    const s = setup(() => status(503), { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, budgetCapacity: 0, budgetRatio: 0 } } });
    const seen = observed(s);
    await s.retrieve().catch(() => undefined);
    expect(seen.exhausted).toEqual([ROUTE]);
    expect(seen.retries).toEqual([]);
    expect(s.sent).toHaveLength(1);
  });
});

describe('the retry budgets', () => {
  it("takes no token from the route when the key's own budget is empty", async () => {
    const s = setup(() => status(503), { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 2, budgetCapacity: 1, budgetRatio: 0 } } });
    await s.retrieve().catch(() => undefined);
    const route = s.guards.of(ROUTE).budget;
    expect(route.available).toBe(9); // ten keys' worth, one spent
    // No observer attached: the refusal is the upstream's error all the same.
    await expect(s.retrieve()).rejects.toBeInstanceOf(UpstreamServerError);
    expect(route.available).toBe(9);
    expect(s.sent).toHaveLength(3);
  });
});

describe('the answer', () => {
  it('decodes a 2xx, and makes any other status a typed error with its route, status and request id', async () => {
    const s = setup((n) => (n === 1 ? { ...OK, statusCode: 299 } : { ...json(enveloped('transaction', aTransaction())), statusCode: n === 2 ? 300 : 404, headers: n === 3 ? { 'x-request-id': 'up-9' } : {} }), ONE_ATTEMPT);
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
    const redirected = await s.retrieve().catch((e: unknown) => e);
    expect(redirected).toMatchObject({ route: ROUTE, statusCode: 300 });
    const missing = await s.retrieve().catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UpstreamNotFoundError);
    expect(missing).toMatchObject({ route: ROUTE, statusCode: 404, requestId: 'up-9' });
    expect((redirected as { requestId?: string }).requestId).toBeUndefined();
  });

  it('carries the request id of a 2xx answer into its decoding errors', async () => {
    const s = setup(() => ({ statusCode: 200, headers: { 'x-request-id': 'up-3' }, body: 'not json' }));
    await expect(s.retrieve()).rejects.toMatchObject({ route: ROUTE, requestId: 'up-3' });
  });

  it('reads a 404 on a route naming no object as the route missing, beyond the spec or not', async () => {
    const s = setup(() => status(404), ONE_ATTEMPT);
    const beyond = await call(s, s.caller(), ENDPOINTS.transactions.list, {}).catch((e: unknown) => e);
    expect(beyond).toBeInstanceOf(UpstreamRouteMissingError);
    expect(beyond).toMatchObject({ route: 'GET /v1/transactions', statusCode: 404, beyondSpec: true });
    const inSpec = await call(s, s.caller(), ENDPOINTS.payouts.search, {}).catch((e: unknown) => e);
    expect(inSpec).toMatchObject({ route: 'GET /v1/payouts/search', beyondSpec: false });
  });

  it('decodes each kind of answer', async () => {
    const answers = [
      json(enveloped('payout', aPayout())),
      json(enveloped('payment_intents', [aPaymentIntent()])),
      json(enveloped('currencies', [aCurrency(), aCurrency({ id: 2, iso: 'EUR' })])),
      json(enveloped('transactions', [aTransaction({ id: 1 })], { meta: aPageMeta() })),
      json([aTransaction({ id: 7 }), aTransaction({ id: 101 })]),
    ];
    const s = setup((n) => answers[n - 1]!);
    const c = s.caller();
    expect(await call(s, c, ENDPOINTS.payouts.create, { amount: Decimal.parse('1') as Decimal, currencyIso: 'XOF' })).toMatchObject({ id: aPayout().id });
    expect(await call(s, c, ENDPOINTS.transactions.send, 'mtn', { token: 't' })).toMatchObject([{ reference: 'pi_1' }]);
    expect(((await call(s, c, ENDPOINTS.currencies.list)) as { iso: string }[]).map((x) => x.iso)).toEqual(['XOF', 'EUR']);
    expect(await call(s, c, ENDPOINTS.transactions.list, {})).toMatchObject({ items: [{ id: 1 }] });
    // An array answer to a read by id: the object with that id.
    expect(await s.retrieve()).toMatchObject({ id: 101 });
  });

  it('refuses a many-answer with an invalid item as a whole, where a list keeps the item as its error', async () => {
    const s = setup(() => json(enveloped('payment_intents', [aPaymentIntent(), aPaymentIntent({ amount: 'lots' })])));
    await expect(call(s, s.caller(), ENDPOINTS.transactions.send, 'mtn', { token: 't' })).rejects.toBeInstanceOf(UpstreamInvalidResponseError);
  });

  it('refuses a page that shows a page parameter was ignored', async () => {
    const s = setup(() => json(enveloped('transactions', [aTransaction({ id: 1 }), aTransaction({ id: 2 })], { meta: aPageMeta() })));
    const error = await call(s, s.caller(), ENDPOINTS.transactions.list, { perPage: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamParameterIgnoredError);
    expect(error).toMatchObject({ route: 'GET /v1/transactions', parameter: 'per_page' });
  });

  it('decodes through the memo when it has one: the same item answers the same object', async () => {
    const s = setup(() => OK, { memo: createDecodeMemo(10) });
    const first = await s.retrieve();
    expect(await s.retrieve()).toBe(first);
    const without = setup(() => OK);
    expect(await without.retrieve()).not.toBe(await without.retrieve());
  });
});

/** `value` as JSON, padded with trailing spaces to exactly `chars` characters (JSON allows them). */
const sized = (value: unknown, chars: number): TransportResponse => {
  const text = JSON.stringify(value);
  return { statusCode: 200, headers: {}, body: text + ' '.repeat(chars - text.length) };
};
/** Turns that let every slice through at once, and note whose each was. */
const notingTurns = (taken: string[]) => ({ sliceMs: 1e9, turn: async (key: string) => void taken.push(key), keysWaiting: 0 }) as unknown as DecodeTurns;

describe('a large answer', () => {
  it('decodes in turns from SLICED_FROM_CHARS characters, by its key, to the same object; one character less at once', async () => {
    const taken: string[] = [];
    const answers = [sized(enveloped('transaction', aTransaction()), SLICED_FROM_CHARS - 1), sized(enveloped('transaction', aTransaction()), SLICED_FROM_CHARS)];
    const s = setup((n) => answers[n - 1]!, { turns: notingTurns(taken) });
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
    expect(taken).toEqual([]);
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
    expect(taken).toEqual([keyId('sk_test_one')]);
  });

  it('decodes each kind in turns to what it decodes at once', async () => {
    const big = SLICED_FROM_CHARS + 10;
    const answers = [
      sized(enveloped('payout', aPayout()), big),
      sized(enveloped('payment_intents', [aPaymentIntent(), aPaymentIntent({ amount: 'lots' })]), big),
      sized(enveloped('currencies', [aCurrency(), aCurrency({ id: 2, iso: 'EUR' })]), big),
      sized(enveloped('transactions', [aTransaction({ id: 1 }), aTransaction({ id: 2 })], { meta: aPageMeta() }), big),
      sized([aTransaction({ id: 7 }), aTransaction({ id: 101 })], big),
    ];
    // The scheduler of the instance's own (none given).
    const s = setup((n) => answers[n - 1]!);
    const c = s.caller();
    expect(await call(s, c, ENDPOINTS.payouts.create, { amount: Decimal.parse('1') as Decimal, currencyIso: 'XOF' })).toMatchObject({ id: aPayout().id });
    await expect(call(s, c, ENDPOINTS.transactions.send, 'mtn', { token: 't' })).rejects.toBeInstanceOf(UpstreamInvalidResponseError);
    expect(((await call(s, c, ENDPOINTS.currencies.list)) as { iso: string }[]).map((x) => x.iso)).toEqual(['XOF', 'EUR']);
    expect(await call(s, c, ENDPOINTS.transactions.list, {})).toMatchObject({ items: [{ id: 1 }, { id: 2 }] });
    expect(await s.retrieve()).toMatchObject({ id: 101 });
  });

  it("checks a large list's items in turns, one item a turn at most, and a read of one object only that object", async () => {
    // Every slice due at once (sliceMs 0); each item's check asks the memo first, which notes it.
    const log: string[] = [];
    const memo: DecodeMemo = { get: () => void log.push('check'), set: () => {} };
    const turns = { sliceMs: 0, turn: async () => void log.push('turn'), keysWaiting: 0 } as unknown as DecodeTurns;
    const big = SLICED_FROM_CHARS + 10;
    const twenty = (make: (i: number) => unknown) => Array.from({ length: 20 }, (_, i) => make(i + 1));
    const answers = [
      sized(enveloped('transactions', twenty((id) => aTransaction({ id })), { meta: { ...aPageMeta(), per_page: 20 } }), big),
      sized(enveloped('currencies', twenty((id) => aCurrency({ id }))), big),
      sized(enveloped('payment_intents', twenty(() => aPaymentIntent())), big),
      sized(twenty((id) => aTransaction({ id: id === 20 ? 101 : id })), big),
      sized(twenty(() => aPayout()), big),
    ];
    const s = setup((n) => answers[n - 1]!, { memo, turns });
    const c = s.caller();
    const checked = async (read: () => Promise<unknown>) => {
      log.length = 0;
      await read();
      return { checks: log.filter((e) => e === 'check').length, inARow: log.join(' ').includes('check check') };
    };
    expect(await checked(() => call(s, c, ENDPOINTS.transactions.list, { perPage: 20 }))).toEqual({ checks: 20, inARow: false });
    expect(await checked(() => call(s, c, ENDPOINTS.currencies.list))).toEqual({ checks: 20, inARow: false });
    expect(await checked(() => call(s, c, ENDPOINTS.transactions.send, 'mtn', { token: 't' }))).toEqual({ checks: 20, inARow: false });
    expect(await checked(() => s.retrieve())).toEqual({ checks: 1, inARow: false });
    // A write answered with a list: its first object.
    expect(await checked(() => call(s, c, ENDPOINTS.payouts.create, { amount: Decimal.parse('1') as Decimal, currencyIso: 'XOF' }))).toEqual({ checks: 1, inARow: false });
  });

  it('tells the operation of an answer from PRICED_FROM_CHARS characters, with its length, and of none shorter', async () => {
    const answers = [sized(enveloped('transaction', aTransaction()), PRICED_FROM_CHARS - 1), sized(enveloped('transaction', aTransaction()), PRICED_FROM_CHARS), sized(enveloped('transaction', aTransaction()), PRICED_FROM_CHARS)];
    const s = setup((n) => answers[n - 1]!);
    const told: number[] = [];
    const onLargeAnswer = (chars: number) => void told.push(chars);
    await s.retrieve('sk_test_one', { onLargeAnswer });
    expect(told).toEqual([]);
    await s.retrieve('sk_test_one', { onLargeAnswer });
    expect(told).toEqual([PRICED_FROM_CHARS]);
    // An operation that does not price answers still gets its object.
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
  });

  it('names the object in a body that is not JSON, or its plural for a list', async () => {
    const s = setup(() => ({ statusCode: 200, headers: {}, body: 'not json' }), ONE_ATTEMPT);
    const c = s.caller();
    await expect(s.retrieve()).rejects.toThrow('GET /v1/transactions/:id: transaction body is not JSON');
    await expect(call(s, c, ENDPOINTS.payouts.create, { amount: Decimal.parse('1') as Decimal, currencyIso: 'XOF' })).rejects.toThrow('POST /v1/payouts: payout body is not JSON');
    await expect(call(s, c, ENDPOINTS.transactions.list, {})).rejects.toThrow('GET /v1/transactions: transactions body is not JSON');
  });

  it('holds a request id only when the upstream sent one, not a repeated header', async () => {
    const s = setup(() => ({ statusCode: 200, headers: { 'x-request-id': ['up-1', 'up-2'] }, body: 'not json' }), ONE_ATTEMPT);
    const error = await s.retrieve().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
    expect((error as { requestId?: unknown }).requestId).toBeUndefined();
  });
});

describe('the bytes an answer holds', () => {
  it("lends each attempt a lease of the caller's share, and gives it back once the answer is decoded", async () => {
    const bytes = new ByteBudget({ totalBytes: 10_000, perKeyBytes: 10_000 });
    const held: number[] = [];
    const s = setup(
      () => async (request) => {
        expect(request.bytes!.grow(500)).toBe(true);
        held.push(bytes.heldBy(keyId('sk_test_one')), bytes.inFlight);
        return OK;
      },
      { bytes },
    );
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
    expect(held).toEqual([500, 500]);
    expect(bytes.inFlight).toBe(0);
    expect(bytes.heldBy(keyId('sk_test_one'))).toBe(0);
  });
});

describe("a key breaker's trial", () => {
  it('leaves the breaker open when the trial ends without an outcome, and gives the next call the trial', async () => {
    const controller = new AbortController();
    const s = setup(
      (n) => (n <= 2 ? status(500) : n === 3 ? () => (controller.abort(new Error('gone')), Promise.reject(new Error('gone'))) : OK),
      { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 }, breaker: { ...DEFAULT_RESILIENCE.breaker, volumeThreshold: 2, resetTimeoutMs: 100 } } },
    );
    await s.retrieve().catch(() => undefined);
    await s.retrieve().catch(() => undefined);
    const breaker = s.guards.keys.of(ROUTE, keyId('sk_test_one'));
    expect(breaker.open).toBe(true);
    s.clock.now += 100;
    await expect(s.retrieve('sk_test_one', { signal: controller.signal })).rejects.toThrow('gone');
    expect(s.sent).toHaveLength(3);
    expect(breaker.open).toBe(true);
    await expect(s.retrieve()).resolves.toMatchObject({ id: 101 });
    expect(breaker.open).toBe(false);
  });
});
