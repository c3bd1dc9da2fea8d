/**
 * The guard one operation's upstream calls pass first (access/upstream-budget.ts, `UpstreamGate`, wrapped around
 * the client by `gatedApi`), over the client's real call chain (upstream/call.ts) and a fake transport whose
 * exchanges the test answers: the budget
 * of calls, the short-circuit once the key is refused, the single probe of a key not yet seen accepted, what each
 * answer tells the key status, the count of calls `extensions.cost` reports, and a large answer priced by its bytes.
 */
import type { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { KeyStatus } from '../../../src/access/key-status.js';
import { BYTES_PER_CALL, gatedApi, UpstreamGate, type CallGate } from '../../../src/access/upstream-budget.js';
import { admitCaller } from '../../../src/access/caller.js';
import { upstreamCallsOf } from '../../../src/limits/operation-cost.js';
import type { OperationScope, PaymentsApi } from '../../../src/upstream/index.js';
import { UpstreamCalls } from '../../../src/upstream/call.js';
import { ENDPOINTS } from '../../../src/upstream/endpoints.js';
import { UpstreamAuthenticationError, UpstreamError, UpstreamNotFoundError, UpstreamPermissionError, UpstreamServerError } from '../../../src/upstream/errors.js';
import { DEFAULT_RESILIENCE, RouteGuards } from '../../../src/upstream/resilience.js';
import type { Transport } from '../../../src/upstream/transport.js';
import { OK, setup, status as answerOf } from '../upstream/fake-calls.js';

const ID = 'b'.repeat(32);
const route = 'GET /v1/transactions/:id';

/**
 * A fake upstream: every exchange is recorded (the transaction id it reads) and waits for the test to settle
 * it, `resolve` answering that transaction. One attempt per call, so a 500 is not retried behind the test's back.
 */
function fakeApi(metadataChars = 0) {
  const calls: { args: unknown[]; resolve: () => void; reject: (e: unknown) => void }[] = [];
  const transport: Transport = {
    send: (url) =>
      new Promise((resolve, reject) => {
        const id = Number(url.pathname.split('/').pop());
        const metadata = metadataChars > 0 ? { metadata: { note: 'x'.repeat(metadataChars) } } : {};
        const answer = () => resolve({ statusCode: 200, headers: {}, body: JSON.stringify({ id, amount: 100, status: 'pending', ...metadata }) });
        calls.push({ args: [id], resolve: answer, reject });
      }),
    close: () => undefined,
  };
  const guards = new RouteGuards({ ...DEFAULT_RESILIENCE, retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 } });
  const chain = new UpstreamCalls({ transport, guards, baseUrl: new URL('http://upstream.test'), callTimeoutMs: 5_000 });
  const through = (gate: UpstreamGate): Verbs => {
    // As the context wires it: the client tells the gate each large answer's size.
    const api = gatedApi(clientOver(chain, 'sk_sandbox_gate', { onLargeAnswer: gate.priceAnswer }), gate);
    const get = (id: number) => api.transactions.retrieve(id).then((t) => t.id);
    return { get, list: get };
  };
  return { through, calls };
}

/** The client's view of one key over `chain`: the transactions' read is all these tests call. */
function clientOver(chain: UpstreamCalls, apiKey: string, scope: OperationScope = {}): PaymentsApi {
  const caller = { apiKey, scope };
  return { transactions: { retrieve: (id: number) => chain.call(caller, ENDPOINTS.transactions.retrieve, [id]) } } as unknown as PaymentsApi;
}

function status(known: boolean) {
  const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
  if (known) keys.accept(ID);
  const told: string[] = [];
  keys.onRevoked(() => told.push('revoked'));
  return { keys, told };
}

const flush = () => new Promise((r) => setImmediate(r));
type Verbs = { get: (id: number) => Promise<unknown>; list: (id: number) => Promise<unknown> };
/** The transactions read through a fresh gate over `api`. */
function guarded(api: ReturnType<typeof fakeApi>, options: { maxCalls: number; callerId: string; keys: KeyStatus }): Verbs {
  return api.through(gateOf(options));
}

/** A gate as an operation's context makes it: over the caller as admitted now. */
function gateOf({ maxCalls, callerId, keys }: { maxCalls: number; callerId: string; keys: KeyStatus }): UpstreamGate {
  return new UpstreamGate(admitCaller(keys, { callerId }, { maxUpstreamCalls: maxCalls }), keys);
}

describe('UpstreamGate', () => {
  it('lets maxCalls calls through, then fails each further one with UPSTREAM_BUDGET_EXCEEDED and makes no call', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys } = status(true);
    const t = guarded(api, { maxCalls: 2, callerId: ID, keys });
    const answers = [t.get(1), t.list(2)];
    await flush();
    calls.forEach((c) => c.resolve());
    expect(await Promise.all(answers)).toEqual([1, 2]);
    const over = (await t.get(3).catch((e: unknown) => e)) as GraphQLError;
    expect(over.message).toBe('This operation reached its budget of 2 upstream calls (an answer counts one per MiB); this field was not read.');
    expect(over.extensions).toEqual({ code: 'UPSTREAM_BUDGET_EXCEEDED', limit: 2 });
    expect(calls.map((c) => c.args)).toEqual([[1], [2]]);
  });

  it('a budget of 0 makes no call at all', async () => {
    const api = fakeApi();
    const { calls } = api;
    const t = guarded(api, { maxCalls: 0, callerId: ID, keys: status(true).keys });
    await expect(t.get(1)).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_BUDGET_EXCEEDED', limit: 0 } });
    expect(calls).toHaveLength(0);
  });

  it('a known key\'s calls go out together', async () => {
    const api = fakeApi();
    const { calls } = api;
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys: status(true).keys });
    void t.get(1);
    void t.get(2);
    void t.list(3);
    await flush();
    expect(calls).toHaveLength(3);
  });

  it('a key not yet seen accepted sends one call; the others wait for it, then go out once it is accepted', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys } = status(false);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const first = t.get(1);
    const second = t.get(2);
    const third = t.list(3);
    await flush();
    expect(calls.map((c) => c.args)).toEqual([[1]]);
    calls[0]!.resolve();
    expect(await first).toBe(1);
    expect(keys.isKnown(ID)).toBe(true);
    await flush();
    expect(calls.map((c) => c.args)).toEqual([[1], [2], [3]]);
    calls[1]!.resolve();
    calls[2]!.resolve();
    expect(await Promise.all([second, third])).toEqual([2, 3]);
  });

  it('a call admitted while the key was known does not let the probe\'s waiters go when it ends first', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys } = status(true);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const early = t.get(1);
    await flush();
    // Another instance revokes the key meanwhile: the next call probes it, the one after waits for that probe.
    keys.revoke(ID);
    const probe = t.get(2).catch((e: unknown) => e);
    const waiting = t.get(3).catch((e: unknown) => e);
    await flush();
    expect(calls.map((c) => c.args)).toEqual([[1], [2]]);
    calls[0]!.resolve();
    expect(await early).toBe(1);
    await flush();
    expect(calls.map((c) => c.args)).toEqual([[1], [2]]);
    const refused = new UpstreamAuthenticationError({ route, statusCode: 401 });
    calls[1]!.reject(refused);
    expect(await probe).toBe(refused);
    expect(await waiting).toBe(refused);
    expect(calls).toHaveLength(2);
  });

  it('the others still go out when the probe failed for another reason than the key', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys } = status(false);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const first = t.get(1).catch((e: unknown) => e);
    const second = t.get(2);
    await flush();
    const failure = new UpstreamServerError({ route, statusCode: 500 });
    calls[0]!.reject(failure);
    expect(await first).toBe(failure);
    expect(keys.isKnown(ID)).toBe(false);
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve();
    expect(await second).toBe(2);
  });

  it('a 401 on the probe fails the waiting calls with it, revokes the key, and no later call is made', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys, told } = status(false);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const first = t.get(1).catch((e: unknown) => e);
    const second = t.get(2).catch((e: unknown) => e);
    await flush();
    const refused = new UpstreamAuthenticationError({ route, statusCode: 401 });
    calls[0]!.reject(refused);
    expect(await first).toBe(refused);
    expect(await second).toBe(refused);
    expect(await t.list(3).catch((e: unknown) => e)).toBe(refused);
    expect(calls).toHaveLength(1);
    expect(keys.isRevoked(ID)).toBe(true);
    expect(told).toEqual(['revoked']);
  });

  it('a 403 short-circuits the operation but revokes nothing (it may concern one route)', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys, told } = status(true);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const first = t.get(1).catch((e: unknown) => e);
    await flush();
    const denied = new UpstreamPermissionError({ route, statusCode: 403 });
    calls[0]!.reject(denied);
    expect(await first).toBe(denied);
    expect(await t.get(2).catch((e: unknown) => e)).toBe(denied);
    expect(calls).toHaveLength(1);
    expect(keys.isRevoked(ID)).toBe(false);
    expect(keys.isKnown(ID)).toBe(true);
    expect(told).toEqual([]);
  });

  it('keeps the first refusal when a second one comes in', async () => {
    const api = fakeApi();
    const { calls } = api;
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys: status(true).keys });
    const a = t.get(1).catch(() => undefined);
    const b = t.get(2).catch(() => undefined);
    await flush();
    const denied = new UpstreamPermissionError({ route, statusCode: 403 });
    calls[0]!.reject(denied);
    calls[1]!.reject(new UpstreamAuthenticationError({ route, statusCode: 401 }));
    await Promise.all([a, b]);
    expect(await t.get(3).catch((e: unknown) => e)).toBe(denied);
  });

  it('a refusal of the request itself (404) proves the key; a 500 does not; both pass through unchanged', async () => {
    for (const [error, proves] of [
      [new UpstreamNotFoundError({ route, statusCode: 404 }), true],
      [new UpstreamServerError({ route, statusCode: 500 }), false],
      [new UpstreamError('odd', 'unexpected_status', { route, statusCode: 429 }), false],
    ] as const) {
      const api = fakeApi();
      const { calls } = api;
      const { keys } = status(false);
      const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
      const first = t.get(1).catch((e: unknown) => e);
      await flush();
      calls[0]!.reject(error);
      expect(await first).toBe(error);
      expect(keys.isKnown(ID), error.message).toBe(proves);
      expect(keys.isRevoked(ID)).toBe(false);
      // Not a refusal of the key: the operation's next call is made.
      void t.get(2).catch(() => undefined);
      await flush();
      expect(calls).toHaveLength(2);
    }
  });

  it('tells the key status once per operation that the upstream took the key, however many of its calls answer', async () => {
    const api = fakeApi();
    const { keys } = status(true);
    let told = 0;
    const accept = keys.accept.bind(keys);
    keys.accept = (callerId: string) => {
      told += 1;
      accept(callerId);
    };
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const answers = [t.get(1), t.get(2), t.list(3)];
    await flush();
    api.calls.forEach((c) => c.resolve());
    expect(await Promise.all(answers)).toEqual([1, 2, 3]);
    const refused = t.get(4).catch((e: unknown) => e);
    await flush();
    api.calls[3]!.reject(new UpstreamNotFoundError({ route, statusCode: 404 }));
    await refused;
    expect(told).toBe(1);
    expect(keys.isKnown(ID)).toBe(true);
    // Another operation of the same key tells it again.
    const next = guarded(api, { maxCalls: 10, callerId: ID, keys }).get(5);
    await flush();
    api.calls[4]!.resolve();
    await next;
    expect(told).toBe(2);
  });

  it('a key proven earlier in the operation and refused by a later call (401) is revoked all the same', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys, told } = status(true);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const first = t.get(1);
    await flush();
    calls[0]!.resolve();
    expect(await first).toBe(1);
    const second = t.get(2).catch((e: unknown) => e);
    await flush();
    const refused = new UpstreamAuthenticationError({ route, statusCode: 401 });
    calls[1]!.reject(refused);
    expect(await second).toBe(refused);
    expect(keys.isRevoked(ID)).toBe(true);
    expect(told).toEqual(['revoked']);
  });

  it('a call that said nothing of the key (a 500) leaves the next answer to prove it', async () => {
    const api = fakeApi();
    const { calls } = api;
    const { keys } = status(false);
    const t = guarded(api, { maxCalls: 10, callerId: ID, keys });
    const first = t.get(1).catch((e: unknown) => e);
    await flush();
    calls[0]!.reject(new UpstreamServerError({ route, statusCode: 500 }));
    await first;
    expect(keys.isProven(ID)).toBe(false);
    const second = t.get(2);
    await flush();
    calls[1]!.resolve();
    expect(await second).toBe(2);
    expect(keys.isProven(ID)).toBe(true);
    expect(keys.isKnown(ID)).toBe(true);
  });

  it('counts every call it admits, and none it refuses, for extensions.cost', async () => {
    const api = fakeApi();
    const gate = gateOf({ maxCalls: 2, callerId: ID, keys: status(true).keys });
    const t = api.through(gate);
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(0);
    const answers = [t.get(1), t.get(2)];
    await flush();
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(2);
    api.calls.forEach((c) => c.resolve());
    await Promise.all(answers);
    await t.get(3).catch(() => undefined);
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(2);
    expect(upstreamCallsOf({})).toBe(0);
    expect(upstreamCallsOf(undefined)).toBe(0);
  });

  it('charges a large answer by its bytes: each MiB past the first is one more call, so the calls after it pay for it', async () => {
    // 3.5 MiB of metadata: an answer of just over 3.5 MiB costs 4 calls.
    const api = fakeApi(3.5 * BYTES_PER_CALL);
    const gate = gateOf({ maxCalls: 6, callerId: ID, keys: status(true).keys });
    const t = api.through(gate);
    const heavy = t.get(1);
    await flush();
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(1);
    api.calls[0]!.resolve();
    expect(await heavy).toBe(1);
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(4);
    // 4 of 6: one more large answer is admitted (as one call, its size unknown until it comes) and brings the count to 8.
    const second = t.get(2);
    await flush();
    api.calls[1]!.resolve();
    await second;
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(8);
    await expect(t.get(3)).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_BUDGET_EXCEEDED', limit: 6 } });
    expect(api.calls).toHaveLength(2);
  });

  it('charges an answer under a MiB as the one call it is', async () => {
    const api = fakeApi(BYTES_PER_CALL - 1000);
    const gate = gateOf({ maxCalls: 6, callerId: ID, keys: status(true).keys });
    const answer = api.through(gate).get(1);
    await flush();
    api.calls[0]!.resolve();
    await answer;
    expect(upstreamCallsOf({ upstreamGate: gate })).toBe(1);
  });
});

describe('gatedApi', () => {
  /** A gate that admits every call, each with its own report (named `label`), and records what each report hears. */
  const gate = (label: string) => {
    const told: unknown[][] = [];
    let n = 0;
    const g: CallGate = {
      admit: async () => {
        const call = `${label}${++n}`;
        return (outcome) => void told.push(outcome.ok ? [call, 'answered'] : [call, 'failed', outcome.error]);
      },
    };
    return { g, told };
  };
  const read = (s: ReturnType<typeof setup>, g: CallGate, apiKey = 'sk_test_one') => gatedApi(clientOver(s.calls, apiKey), g).transactions.retrieve(101);

  // Checked by the type checker (npm run typecheck): the line below must stay an error. A wrapper that
  // dropped the gate would silently lift the operation's budget and key guard.
  it('cannot wrap a client without a gate', () => {
    const neverCalled = (api: PaymentsApi, g: UpstreamGate) => {
      // @ts-expect-error: no gate
      gatedApi(api);
      return gatedApi(api, g);
    };
    expect(neverCalled).toBeTypeOf('function');
  });

  it('hears each call end through the report its admission gave, with the error', async () => {
    const s = setup((n) => (n === 1 ? OK : answerOf(404)), { resilience: { retry: { ...DEFAULT_RESILIENCE.retry, maxAttempts: 1 } } });
    const { g, told } = gate('a');
    await read(s, g);
    const error = await read(s, g).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamNotFoundError);
    expect(told).toEqual([['a1', 'answered'], ['a2', 'failed', error]]);
  });

  it('is told of a refusal before any I/O', async () => {
    const s = setup(() => OK);
    const { g, told } = gate('b');
    const error = await read(s, g, 'not a key').catch((e: unknown) => e);
    expect(told).toEqual([['b1', 'failed', error]]);
    expect(s.sent).toHaveLength(0);
  });

  it('makes no call the gate refuses, and reports nothing for it', async () => {
    const s = setup(() => OK);
    const refusal = new Error('over budget');
    const g: CallGate = { admit: () => Promise.reject(refusal) };
    await expect(read(s, g)).rejects.toBe(refusal);
    expect(s.sent).toHaveLength(0);
  });

  it('wraps each resource once per operation, and reads the verbs of the view it wraps', async () => {
    const s = setup(() => OK);
    const api = gatedApi(clientOver(s.calls, 'sk_test_one'), gate('c').g);
    expect(api.transactions).toBe(api.transactions);
    expect(gatedApi(clientOver(s.calls, 'sk_test_two'), gate('d').g).transactions.retrieve).toBe(api.transactions.retrieve);
    await api.transactions.retrieve(101);
    expect(s.sent).toHaveLength(1);
  });
});
