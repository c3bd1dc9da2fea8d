/**
 * The idempotency guard (src/idempotency/guard.ts) over a small schema run by graphql-js itself, with the real
 * memory store: no gateway, so each case costs milliseconds. Where the key comes from and what it may be, the
 * replay of a result, the refusal of a reused key, the wait for a running first request, what a failure leaves,
 * and a store that cannot keep records. The resilience suites check the same over a real gateway and emulator.
 */
import { GraphQLError, GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, graphql, type ExecutionResult } from 'graphql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalJson, fingerprint, idempotent, MemoryIdempotencyStore, recordKeyFor, type IdempotencyOutcome, type IdempotencyStore, type IdempotentCall } from '../../../src/idempotency/index.js';
import type { Logger } from '../../../src/logger.js';
import { UpstreamAuthenticationError, UpstreamServerError } from '../../../src/upstream/errors.js';

type Settings = { ttlMs: number; waitMs: number; lockMs: number; recordMaxBytes?: number };
type Script = (args: Record<string, unknown>, call: IdempotentCall) => Promise<unknown>;

interface Ctx {
  callerId: string;
  idempotency: {
    store: IdempotencyStore;
    settings: Settings;
    headerKey: string | undefined;
    deadlineAt: number;
    observe?: (o: IdempotencyOutcome) => void;
    verifyCaller?: () => Promise<void>;
  };
  logger: Logger;
  script: Script;
}

const Payload = new GraphQLObjectType({ name: 'Payload', fields: { n: { type: GraphQLInt }, key: { type: GraphQLString } } });
const args = { amount: { type: GraphQLInt }, note: { type: GraphQLString }, idempotencyKey: { type: GraphQLString } };
const resolver = (options?: { coalesceUnkeyed: boolean }) =>
  idempotent<unknown, Record<string, unknown>, Ctx, unknown>((_parent, a, context, call) => context.script(a, call), options);
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt, resolve: () => 1 } } }),
  mutation: new GraphQLObjectType({
    name: 'Mutation',
    fields: {
      send: { type: Payload, args, resolve: resolver() },
      other: { type: Payload, args, resolve: resolver() },
      prompt: { type: Payload, args, resolve: resolver({ coalesceUnkeyed: true }) },
    },
  }),
});

/** One gateway's worth of state: a store, the outcomes observed, the errors logged, the upstream writes made. */
function world(settings: Settings = { ttlMs: 60_000, waitMs: 1_000, lockMs: 5_000 }, store: IdempotencyStore = new MemoryIdempotencyStore()) {
  const outcomes: IdempotencyOutcome[] = [];
  const logged: string[] = [];
  const loggedErrors: unknown[] = [];
  const writes: unknown[] = [];
  const logger = { error: (o: { err: unknown }, msg: string) => void (logged.push(msg), loggedErrors.push(o.err)) } as unknown as Logger;
  /** A resolver that makes one upstream write and answers how many writes were made so far. */
  const writeOnce: Script = async (_a, call) => {
    const options = await call.options();
    writes.push(options);
    return { n: writes.length, key: options.idempotencyKey ?? null };
  };
  const run = (query: string, opts: { headerKey?: string; callerId?: string; script?: Script; deadlineAt?: number; verifyCaller?: () => Promise<void>; unobserved?: boolean } = {}) =>
    graphql({
      schema,
      source: query,
      contextValue: {
        callerId: opts.callerId ?? 'caller-a',
        idempotency: {
          store,
          settings,
          headerKey: opts.headerKey,
          deadlineAt: opts.deadlineAt ?? Date.now() + 60_000,
          ...(opts.unobserved ? {} : { observe: (o: IdempotencyOutcome) => void outcomes.push(o) }),
          ...(opts.verifyCaller ? { verifyCaller: opts.verifyCaller } : {}),
        },
        logger,
        script: opts.script ?? writeOnce,
      } satisfies Ctx,
    });
  return { run, outcomes, logged, loggedErrors, writes, store, writeOnce };
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Date.now held at `at` until moved: the guard's waits and the lock's end compare against it. */
function heldClock(at = 1_000_000) {
  let now = at;
  vi.spyOn(Date, 'now').mockImplementation(() => now);
  return { set: (ms: number) => void (now = ms), advance: (ms: number) => void (now += ms) };
}

const codes = (r: ExecutionResult) => r.errors?.map((e) => e.extensions.code) ?? [];
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
};

describe('idempotency guard: the key', () => {
  it('without a key, every call runs and sends no key upstream', async () => {
    const w = world();
    expect((await w.run('mutation { send(amount: 1) { n key } }')).data).toEqual({ send: { n: 1, key: null } });
    expect((await w.run('mutation { send(amount: 1) { n key } }')).data).toEqual({ send: { n: 2, key: null } });
    expect(w.writes).toEqual([{}, {}]);
    expect(w.outcomes).toEqual([]);
  });

  it('the argument keys the call: the first runs with the key upstream, a duplicate gets its result without running', async () => {
    const w = world();
    const first = await w.run('mutation { send(amount: 1, idempotencyKey: "k-1") { n key } }');
    const again = await w.run('mutation { send(amount: 1, idempotencyKey: "k-1") { n key } }');
    expect(first.data).toEqual({ send: { n: 1, key: 'k-1' } });
    expect(again.data).toEqual(first.data);
    expect(w.writes).toEqual([{ idempotencyKey: 'k-1' }]);
    expect(w.outcomes).toEqual(['executed', 'replayed']);
  });

  it('a second write of the same mutation carries the key with its step', async () => {
    const w = world();
    const twoSteps: Script = async (_a, call) => {
      const keys = [(await call.options()).idempotencyKey, (await call.options('refund')).idempotencyKey];
      return { n: 2, key: keys.join(' ') };
    };
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { key } }', { script: twoSteps })).data).toEqual({ send: { key: 'k k:refund' } });
  });

  it('the header keys an operation of one mutation field (__typename aside)', async () => {
    const w = world();
    const first = await w.run('mutation { __typename send(amount: 1) { n key } }', { headerKey: 'h-1' });
    const again = await w.run('mutation { send(amount: 1) { n key } }', { headerKey: 'h-1' });
    expect(first.data).toMatchObject({ send: { n: 1, key: 'h-1' } });
    expect(again.data).toEqual({ send: { n: 1, key: 'h-1' } });
  });

  it('the header is refused for an operation of several mutation fields, naming the header', async () => {
    const w = world();
    const result = await w.run('mutation { send(amount: 1) { n } other(amount: 1) { n } }', { headerKey: 'h-2' });
    expect(result.errors?.map((e) => [e.message, e.extensions])).toEqual([
      [expect.stringMatching(/^The Idempotency-Key header applies to an operation with a single mutation field/), { code: 'BAD_USER_INPUT', argument: 'Idempotency-Key' }],
      [expect.stringMatching(/^The Idempotency-Key header applies/), { code: 'BAD_USER_INPUT', argument: 'Idempotency-Key' }],
    ]);
    expect(w.writes).toEqual([]);
  });

  it('an argument and a header that differ are refused; the same key in both is one key', async () => {
    const w = world();
    const differ = await w.run('mutation { send(amount: 1, idempotencyKey: "a") { n } }', { headerKey: 'b' });
    expect(differ.errors?.map((e) => [e.message, e.extensions])).toEqual([
      ['`idempotencyKey` and the Idempotency-Key header differ; send one of them.', { code: 'BAD_USER_INPUT', argument: 'idempotencyKey' }],
    ]);
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "same") { key } }', { headerKey: 'same' })).data).toEqual({ send: { key: 'same' } });
  });

  it.each([
    ['empty', ''],
    ['201 characters', 'k'.repeat(201)],
    ['a space', 'a b'],
    ['a non-ASCII character', 'clé'],
    ['a control character', 'a\\u0007b'],
  ])('a key with %s is refused before anything runs', async (_what, key) => {
    const w = world();
    const result = await w.run(`mutation { send(amount: 1, idempotencyKey: "${key}") { n } }`);
    expect(result.errors?.map((e) => [e.message, e.extensions])).toEqual([
      ['`idempotencyKey` must be 1 to 200 visible ASCII characters (a UUID fits).', { code: 'BAD_USER_INPUT', argument: 'idempotencyKey' }],
    ]);
    expect(w.writes).toEqual([]);
  });

  it('a key of 200 visible characters, from ! to ~, is taken', async () => {
    const w = world();
    const key = `!~${'x'.repeat(198)}`;
    expect((await w.run(`mutation { send(amount: 1, idempotencyKey: ${JSON.stringify(key)}) { key } }`)).data).toEqual({ send: { key } });
  });

  it('keys belong to their caller: another caller\'s same key is another record', async () => {
    const w = world();
    await w.run('mutation { send(amount: 1, idempotencyKey: "mine") { n } }');
    const theirs = await w.run('mutation { send(amount: 2, idempotencyKey: "mine") { n } }', { callerId: 'caller-b' });
    expect(theirs.data).toEqual({ send: { n: 2 } });
  });

  it('arguments nested past the limit run unguarded: nothing to fingerprint, the resolver refuses them itself', async () => {
    const w = world();
    const nested = idempotent<unknown, Record<string, unknown>, Ctx, unknown>(async (_p, _a, _c, call) => call.options());
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 1_100; i += 1) deep = { d: deep };
    const context = { callerId: 'c', idempotency: { store: w.store, settings: { ttlMs: 1, waitMs: 1, lockMs: 1 }, headerKey: undefined, deadlineAt: Date.now() + 1_000, observe: () => {} }, logger: {} as Logger, script: w.writeOnce };
    const info = { fieldName: 'send', operation: { operation: 'mutation' } } as never;
    expect(await nested(null, { idempotencyKey: 'deep', meta: deep }, context, info)).toEqual({});
  });
});

describe('idempotency guard: without an observer', () => {
  it('runs and replays all the same', async () => {
    const w = world();
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { unobserved: true })).data).toEqual({ send: { n: 1 } });
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { unobserved: true })).data).toEqual({ send: { n: 1 } });
    expect(w.writes).toHaveLength(1);
  });
});

describe('idempotency guard: what the claim finds when the peek found nothing', () => {
  /** A store whose peek saw no record, and whose claim finds `claim` (another request got there in between). */
  const racing = (claim: Awaited<ReturnType<IdempotencyStore['claim']>>) =>
    Object.assign(Object.create(new MemoryIdempotencyStore()) as IdempotencyStore, { peek: async () => ({ kind: 'none' }) as const, claim: async () => claim });

  it('another input took the key: IDEMPOTENCY_KEY_REUSED, nothing sent', async () => {
    const w = world(undefined, racing({ kind: 'mismatch' }));
    expect(codes(await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }'))).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(w.writes).toEqual([]);
  });

  it('the same input is running: waits up to waitMs, then IDEMPOTENCY_IN_PROGRESS', async () => {
    const w = world({ ttlMs: 60_000, waitMs: 50, lockMs: 5_000 }, racing({ kind: 'in_progress' }));
    expect(codes(await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }'))).toEqual(['IDEMPOTENCY_IN_PROGRESS']);
    expect(w.writes).toEqual([]);
  });

  it('with no time left to wait, IDEMPOTENCY_IN_PROGRESS at once, without waiting on the store', async () => {
    const clock = heldClock();
    const store = racing({ kind: 'in_progress' });
    // A wait on the store moves the clock on, so a guard that waits at all still ends.
    const waits = vi.spyOn(store, 'changed').mockImplementation(async () => clock.advance(1));
    const w = world({ ttlMs: 60_000, waitMs: 0, lockMs: 5_000 }, store);
    expect(codes(await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }'))).toEqual(['IDEMPOTENCY_IN_PROGRESS']);
    expect(waits).not.toHaveBeenCalled();
  });

  it('and never past the operation\'s deadline', async () => {
    const w = world({ ttlMs: 60_000, waitMs: 10_000, lockMs: 5_000 }, racing({ kind: 'in_progress' }));
    const started = Date.now();
    expect(codes(await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { deadlineAt: Date.now() + 100 }))).toEqual(['IDEMPOTENCY_IN_PROGRESS']);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('idempotency guard: same key, other input', () => {
  it('two keys of one caller are two records', async () => {
    const w = world();
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "first") { n } }')).data).toEqual({ send: { n: 1 } });
    expect((await w.run('mutation { send(amount: 2, idempotencyKey: "second") { n } }')).data).toEqual({ send: { n: 2 } });
  });

  it('is refused as IDEMPOTENCY_KEY_REUSED, whichever argument differs, and observed as a conflict', async () => {
    const w = world();
    await w.run('mutation { send(amount: 1, note: "a", idempotencyKey: "k") { n } }');
    for (const query of ['mutation { send(amount: 2, note: "a", idempotencyKey: "k") { n } }', 'mutation { send(amount: 1, idempotencyKey: "k") { n } }', 'mutation { other(amount: 1, note: "a", idempotencyKey: "k") { n } }']) {
      const result = await w.run(query);
      expect(result.errors?.map((e) => [e.message, e.extensions.code]), query).toEqual([
        ['This idempotency key was already used with a different input; use a new key for a new request.', 'IDEMPOTENCY_KEY_REUSED'],
      ]);
    }
    expect(w.outcomes).toEqual(['executed', 'conflict', 'conflict', 'conflict']);
    expect(w.writes).toHaveLength(1);
  });

  it('the order of the arguments does not matter', async () => {
    const w = world();
    await w.run('mutation { send(amount: 1, note: "a", idempotencyKey: "k") { n } }');
    expect((await w.run('mutation { send(idempotencyKey: "k", note: "a", amount: 1) { n } }')).data).toEqual({ send: { n: 1 } });
  });
});

describe('idempotency guard: a first request still running', () => {
  it('a duplicate waits for it and gets its result', async () => {
    const w = world();
    const g = gate();
    const slow: Script = async (a, call) => {
      await call.options();
      await g.opened;
      return w.writeOnce(a, { options: async () => ({ idempotencyKey: 'k' }) });
    };
    const first = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: slow });
    await new Promise((r) => setTimeout(r, 20));
    const duplicate = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }');
    await new Promise((r) => setTimeout(r, 20));
    g.open();
    expect((await first).data).toEqual({ send: { n: 1 } });
    expect((await duplicate).data).toEqual({ send: { n: 1 } });
    expect(w.outcomes.sort()).toEqual(['executed', 'replayed']);
  });

  it('past waitMs the duplicate is told IDEMPOTENCY_IN_PROGRESS', async () => {
    const w = world({ ttlMs: 60_000, waitMs: 50, lockMs: 5_000 });
    const g = gate();
    const first = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: async (_a, call) => (await call.options(), await g.opened, { n: 0 }) });
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const duplicate = await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }');
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(duplicate.errors?.map((e) => [e.message, e.extensions.code])).toEqual([
      ['A request with this idempotency key is still running; retry with the same key shortly to get its result.', 'IDEMPOTENCY_IN_PROGRESS'],
    ]);
    expect(w.outcomes).toEqual(['in_progress']);
    g.open();
    await first;
  });

  it('never waits past the operation\'s deadline, even with a long waitMs', async () => {
    const w = world({ ttlMs: 60_000, waitMs: 10_000, lockMs: 5_000 });
    const g = gate();
    const first = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: async (_a, call) => (await call.options(), await g.opened, { n: 0 }) });
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const duplicate = await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { deadlineAt: Date.now() + 100 });
    expect(codes(duplicate)).toEqual(['IDEMPOTENCY_IN_PROGRESS']);
    expect(Date.now() - started).toBeLessThan(2_000);
    g.open();
    await first;
  });

  it('a duplicate with no time left to wait is told IDEMPOTENCY_IN_PROGRESS at once, without waiting on the store', async () => {
    const clock = heldClock();
    const store = new MemoryIdempotencyStore();
    const fp = fingerprint('send', { amount: 1 });
    expect((await store.claim(recordKeyFor('caller-a', 'k'), fp, 5_000, 'caller-a')).kind).toBe('acquired');
    const waits = vi.spyOn(store, 'changed').mockImplementation(async () => clock.advance(1));
    const w = world({ ttlMs: 60_000, waitMs: 0, lockMs: 5_000 }, store);
    expect(codes(await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }'))).toEqual(['IDEMPOTENCY_IN_PROGRESS']);
    expect(waits).not.toHaveBeenCalled();
    expect(w.outcomes).toEqual(['in_progress']);
  });

  it('a duplicate that finds the record running only when it claims waits there too, and replays the result', async () => {
    const w = world();
    const g = gate();
    // The duplicate peeks before the first claims, then claims while the first runs.
    const second = gate();
    const first = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', {
      script: async (a, call) => {
        await second.opened;
        await call.options();
        await g.opened;
        return w.writeOnce(a, { options: async () => ({}) });
      },
    });
    const duplicate = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', {
      script: async (a, call) => {
        second.open();
        await new Promise((r) => setTimeout(r, 20));
        return w.writeOnce(a, call);
      },
    });
    await new Promise((r) => setTimeout(r, 60));
    g.open();
    expect((await first).data).toEqual({ send: { n: 1 } });
    expect((await duplicate).data).toEqual({ send: { n: 1 } });
    expect(w.writes).toHaveLength(1);
  });
});

describe('idempotency guard: failures', () => {
  it('a failed run releases the key: the same input runs again, another input is still refused', async () => {
    const w = world();
    const failing: Script = async (_a, call) => {
      await call.options();
      throw new UpstreamServerError({ route: 'POST /v1/transactions', statusCode: 500 });
    };
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: failing })).errors).toHaveLength(1);
    // Bound for ttlMs, not for the millisecond a refused key's record lasts.
    await new Promise((r) => setTimeout(r, 10));
    expect(codes(await w.run('mutation { send(amount: 2, idempotencyKey: "k") { n } }'))).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }')).data).toEqual({ send: { n: 1 } });
    expect(w.outcomes).toEqual(['conflict', 'executed']);
  });

  it('a key the upstream refused leaves a record that expires at once: the key is free for any input', async () => {
    const w = world();
    const refused: Script = async (_a, call) => {
      await call.options();
      throw new UpstreamAuthenticationError({ route: 'POST /v1/transactions', statusCode: 401 });
    };
    await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: refused });
    await new Promise((r) => setTimeout(r, 10));
    expect((await w.run('mutation { send(amount: 2, idempotencyKey: "k") { n } }')).data).toEqual({ send: { n: 1 } });
  });

  it('a run that failed before any write releases nothing: it never claimed the key', async () => {
    const store = new MemoryIdempotencyStore();
    const releases = vi.spyOn(store, 'release');
    const w = world(undefined, store);
    const refusedLocally: Script = async () => {
      throw new GraphQLError('amount must be positive', { extensions: { code: 'BAD_USER_INPUT' } });
    };
    expect(codes(await w.run('mutation { send(amount: -1, idempotencyKey: "k") { n } }', { script: refusedLocally }))).toEqual(['BAD_USER_INPUT']);
    expect(releases).not.toHaveBeenCalled();
  });

  it('a run that wrote nothing upstream keeps nothing: the next call runs', async () => {
    const w = world();
    let runs = 0;
    const local: Script = async () => ({ n: (runs += 1) });
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: local })).data).toEqual({ send: { n: 1 } });
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: local })).data).toEqual({ send: { n: 2 } });
    expect((await w.run('mutation { send(amount: 9, idempotencyKey: "k") { n } }', { script: local })).data).toEqual({ send: { n: 3 } });
  });

  it('a run that wrote nothing answers with the result of a duplicate that ran meanwhile', async () => {
    const w = world();
    const g = gate();
    const local = w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: async () => (await g.opened, { n: 99 }) });
    await new Promise((r) => setTimeout(r, 10));
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }')).data).toEqual({ send: { n: 1 } });
    g.open();
    expect((await local).data).toEqual({ send: { n: 1 } });
  });
});

describe('idempotency guard: a replay asks whether the key is still good', () => {
  it('verifies the caller before replaying, and replays nothing when the key was refused', async () => {
    const w = world();
    await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }');
    let asked = 0;
    const ok = await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { verifyCaller: async () => void (asked += 1) });
    expect(ok.data).toEqual({ send: { n: 1 } });
    expect(asked).toBe(1);
    const refused = await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', {
      verifyCaller: async () => {
        throw new GraphQLError('The payments API rejected the API key.', { extensions: { code: 'UNAUTHENTICATED' } });
      },
    });
    expect(refused.data).toEqual({ send: null });
    expect(codes(refused)).toEqual(['UNAUTHENTICATED']);
  });

  it('verifies it too when the record completes while it claims', async () => {
    const store = new MemoryIdempotencyStore();
    const done = { kind: 'completed', json: '{"n":5,"key":"k"}' } as const;
    const racing: IdempotencyStore = Object.assign(Object.create(store) as IdempotencyStore, {
      peek: async () => ({ kind: 'none' }) as const,
      claim: async () => done,
    });
    const w = world(undefined, racing);
    let asked = 0;
    const result = await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n key } }', { verifyCaller: async () => void (asked += 1) });
    expect(result.data).toEqual({ send: { n: 5, key: 'k' } });
    expect(asked).toBe(1);
    expect(w.outcomes).toEqual(['replayed']);
  });
});

describe('idempotency guard: a store that cannot keep records', () => {
  const broken = (overrides: Partial<IdempotencyStore>): IdempotencyStore => Object.assign(Object.create(new MemoryIdempotencyStore()) as IdempotencyStore, overrides);

  it('unreachable: the keyed mutation is not sent, IDEMPOTENCY_UNAVAILABLE, logged', async () => {
    for (const store of [broken({ peek: async () => Promise.reject(new Error('redis down')) }), broken({ claim: async () => Promise.reject(new Error('redis down')) })]) {
      const w = world(undefined, store);
      const result = await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }');
      expect(result.errors?.map((e) => [e.message, e.extensions.code])).toEqual([
        ['Idempotency records cannot be kept right now, so this keyed mutation was not sent; retry shortly.', 'IDEMPOTENCY_UNAVAILABLE'],
      ]);
      expect(w.writes).toEqual([]);
      expect(w.logged).toEqual(['idempotency store unreachable: keyed mutation not sent']);
      expect(w.loggedErrors).toEqual([new Error('redis down')]);
      expect(w.outcomes).toEqual(['unavailable']);
    }
  });

  it('full: IDEMPOTENCY_UNAVAILABLE, nothing sent', async () => {
    const w = world(undefined, broken({ claim: async () => ({ kind: 'full' }) }));
    expect(codes(await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }'))).toEqual(['IDEMPOTENCY_UNAVAILABLE']);
    expect(w.writes).toEqual([]);
  });

  it('a result that cannot be stored is still the answer (the write happened), and is logged', async () => {
    const w = world(undefined, broken({ complete: async () => Promise.reject(new Error('redis down')) }));
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }')).data).toEqual({ send: { n: 1 } });
    expect(w.logged).toEqual(['idempotency result could not be stored']);
    expect(w.loggedErrors).toEqual([new Error('redis down')]);
  });

  it('a result the store refused is stored once it is back, within the lock: the resend replays and acts once', async () => {
    let refusals = 2;
    const memory = new MemoryIdempotencyStore();
    const store = broken({
      complete: (...a: Parameters<IdempotencyStore['complete']>) => (refusals-- > 0 ? Promise.reject(new Error('redis down')) : memory.complete(...a)),
      claim: (...a: Parameters<IdempotencyStore['claim']>) => memory.claim(...a),
      peek: (...a: Parameters<IdempotencyStore['peek']>) => memory.peek(...a),
    });
    const w = world({ ttlMs: 60_000, waitMs: 100, lockMs: 5_000 }, store);
    const query = 'mutation { send(amount: 1, idempotencyKey: "k") { n } }';
    expect((await w.run(query)).data).toEqual({ send: { n: 1 } });
    for (const deadline = Date.now() + 3_000; (await memory.peek(recordKeyFor('caller-a', 'k'), fingerprint('send', { amount: 1 }), 'caller-a')).kind !== 'completed'; ) {
      if (Date.now() > deadline) throw new Error('the result was never stored');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await w.run(query)).data).toEqual({ send: { n: 1 } });
    expect(w.writes).toHaveLength(1);
    expect(w.logged).toEqual(['idempotency result could not be stored']);
  });

  it('a result the store refused is offered again only until the claim\'s lock lapses, to the millisecond', async () => {
    const clock = heldClock();
    let offers = 0;
    const w = world({ ttlMs: 60_000, waitMs: 100, lockMs: 5_000 }, broken({ complete: async () => (offers++, Promise.reject(new Error('redis down'))) }));
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }')).data).toEqual({ send: { n: 1 } });
    expect(offers).toBe(1);
    // Claimed at 1_000_000 with a lock of 5 s: one millisecond before it lapses, the result is offered again.
    clock.set(1_000_000 + 5_000 - 1);
    for (const end = performance.now() + 3_000; offers < 2 && performance.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    expect(offers).toBe(2);
    // From the millisecond it lapses, another claim may take the key: no more offers.
    clock.set(1_000_000 + 5_000);
    await new Promise((r) => setTimeout(r, 700));
    expect(offers).toBe(2);
  });

  it('a release that fails leaves the failure as the answer, and is logged', async () => {
    const w = world(undefined, broken({ release: async () => Promise.reject(new Error('redis down')) }));
    const failing: Script = async (_a, call) => {
      await call.options();
      throw new UpstreamServerError({ route: 'POST /v1/transactions', statusCode: 500 });
    };
    expect((await w.run('mutation { send(amount: 1, idempotencyKey: "k") { n } }', { script: failing })).errors?.[0]?.message).toMatch(/500|Upstream/);
    expect(w.logged).toEqual(['idempotency record could not be released; it frees itself when its lock expires']);
    expect(w.loggedErrors).toEqual([new Error('redis down')]);
  });
});

describe('idempotency guard: a result too large to keep', () => {
  it('over recordMaxBytes: the first gets its answer, a duplicate IDEMPOTENCY_RESULT_NOT_KEPT (a replay), nothing sent again', async () => {
    // The answer {"n":1,"key":"k"} is 17 characters, 34 bytes counted.
    const w = world({ ttlMs: 60_000, waitMs: 1_000, lockMs: 5_000, recordMaxBytes: 33 });
    const query = 'mutation { send(amount: 1, idempotencyKey: "k") { n key } }';
    expect((await w.run(query)).data).toEqual({ send: { n: 1, key: 'k' } });
    expect(codes(await w.run(query))).toEqual(['IDEMPOTENCY_RESULT_NOT_KEPT']);
    expect(w.writes).toHaveLength(1);
    expect(w.outcomes).toEqual(['executed', 'replayed']);
  });

  it('within recordMaxBytes to the byte, it is kept and replayed', async () => {
    const w = world({ ttlMs: 60_000, waitMs: 1_000, lockMs: 5_000, recordMaxBytes: 34 });
    const query = 'mutation { send(amount: 1, idempotencyKey: "k") { n key } }';
    await w.run(query);
    expect((await w.run(query)).data).toEqual({ send: { n: 1, key: 'k' } });
    expect(w.writes).toHaveLength(1);
  });
});

describe('recordKeyFor', () => {
  it('is the hex SHA-256 of the caller and the key, kept apart: no NUL or raw byte reaches a storage key', () => {
    expect(recordKeyFor('ab', 'c')).toMatch(/^[0-9a-f]{64}$/);
    expect(recordKeyFor('ab', 'c')).not.toBe(recordKeyFor('a', 'bc'));
  });
});

describe('idempotency guard: unkeyed calls', () => {
  it('a mutation that coalesces joins an identical call of the same caller still running; others do not', async () => {
    const w = world();
    const g = gate();
    const slow: Script = async (a, call) => (await g.opened, w.writeOnce(a, call));
    const joined = [w.run('mutation { prompt(amount: 1) { n } }', { script: slow }), w.run('mutation { prompt(amount: 1) { n } }', { script: slow })];
    const apart = [w.run('mutation { send(amount: 1) { n } }', { script: slow }), w.run('mutation { send(amount: 1) { n } }', { script: slow })];
    const otherInput = w.run('mutation { prompt(amount: 2) { n } }', { script: slow });
    const otherCaller = w.run('mutation { prompt(amount: 1) { n } }', { script: slow, callerId: 'caller-b' });
    g.open();
    const [a, b] = await Promise.all(joined);
    expect(a!.data).toEqual(b!.data);
    await Promise.all([...apart, otherInput, otherCaller]);
    expect(w.writes).toHaveLength(5);
  });
});

describe('fingerprint', () => {
  it('is the field and every argument but the key, in any order, at any depth', () => {
    expect(fingerprint('send', { a: 1, b: { y: 2, x: 1 }, idempotencyKey: 'k' })).toBe(fingerprint('send', { b: { x: 1, y: 2 }, a: 1 }));
    expect(fingerprint('send', { a: 1 })).not.toBe(fingerprint('other', { a: 1 }));
    expect(fingerprint('send', { a: 1 })).not.toBe(fingerprint('send', { a: 2 }));
    expect(fingerprint('sen', { d: 1 })).not.toBe(fingerprint('send', {}));
  });

  it('canonical JSON sorts keys, keeps arrays in order and nulls as they are', () => {
    expect(canonicalJson({ b: [3, 1, { d: null, c: 2 }], a: 'x', ab: 1, B: 0 })).toBe('{"B":0,"a":"x","ab":1,"b":[3,1,{"c":2,"d":null}]}');
    expect(canonicalJson({ when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}');
  });
});
