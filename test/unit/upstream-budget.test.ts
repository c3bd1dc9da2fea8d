/**
 * The guards one operation's upstream client carries (limits/upstream-budget.ts), over a fake client whose calls
 * the test answers: the budget of calls, the short-circuit once the key is refused, the single probe of a key
 * not yet seen accepted, and what each answer tells the key status.
 */
import type { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { KeyStatus } from '../../src/limits/key-status.js';
import { guardUpstream } from '../../src/limits/upstream-budget.js';
import type { PaymentsApi } from '../../src/upstream/api.js';
import { UpstreamAuthenticationError, UpstreamError, UpstreamNotFoundError, UpstreamPermissionError, UpstreamServerError } from '../../src/upstream/errors.js';

const ID = 'b'.repeat(32);
const route = 'GET /v1/transactions/:id';

/** A fake client: every call is recorded and waits for the test to settle it. */
function fakeApi() {
  const calls: { args: unknown[]; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  const call = (...args: unknown[]) => new Promise((resolve, reject) => void calls.push({ args, resolve, reject }));
  const api = { transactions: { get: call, list: call, label: 'not a verb' }, version: 'v1', nothing: null } as unknown as PaymentsApi;
  return { api, calls };
}

function status(known: boolean) {
  const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000 });
  if (known) keys.accept(ID);
  const told: string[] = [];
  keys.onRevoked(() => told.push('revoked'));
  return { keys, told };
}

const flush = () => new Promise((r) => setImmediate(r));
type Verbs = { get: (...a: unknown[]) => Promise<unknown>; list: (...a: unknown[]) => Promise<unknown> };
const verbs = (api: PaymentsApi) => (api as unknown as { transactions: Verbs }).transactions;

describe('guardUpstream', () => {
  it('lets maxCalls calls through, then fails each further one with UPSTREAM_BUDGET_EXCEEDED and makes no call', async () => {
    const { api, calls } = fakeApi();
    const { keys } = status(true);
    const t = verbs(guardUpstream(api, { maxCalls: 2, callerId: ID, keys }));
    const answers = [t.get(1), t.list(2)];
    await flush();
    calls.forEach((c, i) => c.resolve(`answer ${i}`));
    expect(await Promise.all(answers)).toEqual(['answer 0', 'answer 1']);
    const over = (await t.get(3).catch((e: unknown) => e)) as GraphQLError;
    expect(over.message).toBe('This operation reached its budget of 2 upstream calls; this field was not read.');
    expect(over.extensions).toEqual({ code: 'UPSTREAM_BUDGET_EXCEEDED', limit: 2 });
    expect(calls.map((c) => c.args)).toEqual([[1], [2]]);
  });

  it('a budget of 0 makes no call at all', async () => {
    const { api, calls } = fakeApi();
    const t = verbs(guardUpstream(api, { maxCalls: 0, callerId: ID, keys: status(true).keys }));
    await expect(t.get(1)).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_BUDGET_EXCEEDED', limit: 0 } });
    expect(calls).toHaveLength(0);
  });

  it('a known key\'s calls go out together', async () => {
    const { api, calls } = fakeApi();
    const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys: status(true).keys }));
    void t.get(1);
    void t.get(2);
    void t.list(3);
    await flush();
    expect(calls).toHaveLength(3);
  });

  it('a key not yet seen accepted sends one call; the others wait for it, then go out once it is accepted', async () => {
    const { api, calls } = fakeApi();
    const { keys } = status(false);
    const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys }));
    const first = t.get(1);
    const second = t.get(2);
    const third = t.list(3);
    await flush();
    expect(calls.map((c) => c.args)).toEqual([[1]]);
    calls[0]!.resolve('first');
    expect(await first).toBe('first');
    expect(keys.isKnown(ID)).toBe(true);
    await flush();
    expect(calls.map((c) => c.args)).toEqual([[1], [2], [3]]);
    calls[1]!.resolve('second');
    calls[2]!.resolve('third');
    expect(await Promise.all([second, third])).toEqual(['second', 'third']);
  });

  it('the others still go out when the probe failed for another reason than the key', async () => {
    const { api, calls } = fakeApi();
    const { keys } = status(false);
    const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys }));
    const first = t.get(1).catch((e: unknown) => e);
    const second = t.get(2);
    await flush();
    const failure = new UpstreamServerError({ route, statusCode: 500 });
    calls[0]!.reject(failure);
    expect(await first).toBe(failure);
    expect(keys.isKnown(ID)).toBe(false);
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve('second');
    expect(await second).toBe('second');
  });

  it('a 401 on the probe fails the waiting calls with it, revokes the key, and no later call is made', async () => {
    const { api, calls } = fakeApi();
    const { keys, told } = status(false);
    const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys }));
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
    const { api, calls } = fakeApi();
    const { keys, told } = status(true);
    const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys }));
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
    const { api, calls } = fakeApi();
    const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys: status(true).keys }));
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
      const { api, calls } = fakeApi();
      const { keys } = status(false);
      const t = verbs(guardUpstream(api, { maxCalls: 10, callerId: ID, keys }));
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

  it('passes through what is not a resource, and hands out the same wrapped resource each time', () => {
    const { api } = fakeApi();
    const guarded = guardUpstream(api, { maxCalls: 1, callerId: ID, keys: status(true).keys }) as unknown as Record<string, unknown>;
    expect(guarded.version).toBe('v1');
    expect(guarded.nothing).toBeNull();
    expect(guarded.transactions).toBe(guarded.transactions);
    expect((guarded.transactions as Record<string, unknown>).label).toBe('not a verb');
  });
});
