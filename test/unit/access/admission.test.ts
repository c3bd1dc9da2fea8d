/**
 * The one way in (access/admission.ts), over a fake upstream and the real key status: who the caller is, whose
 * rate an operation, a connection or a stream spends, what a streaming transport's document must be, and how a
 * live stream's key is proven and ended. The transports' own suites (test/security/*) check the same door over
 * HTTP, WebSocket and SSE; this one reaches the branches they cannot vary cheaply.
 */
import { GraphQLError, parse } from 'graphql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createAdmission, REVOKED_KEY_MESSAGE, type Admission } from '../../../src/access/admission.js';
import type { RateLimitName } from '../../../src/access/rate-limit.js';
import type { StreamRequest } from '../../../src/access/stream-admission.js';
import type { UpstreamGate } from '../../../src/access/upstream-budget.js';
import { validatedDocuments } from '../../../src/limits/document-store.js';
import { documentRules, operationCheck } from '../../../src/limits/graphql-limits.js';
import { documentCheck } from '../../../src/limits/document-check.js';
import { KeyStatus } from '../../../src/access/key-status.js';
import { createLogger } from '../../../src/logger.js';
import { buildSchema } from '../../../src/schema.js';
import { keyId } from '../../../src/upstream/key-id.js';
import type { PaymentsApi } from '../../../src/upstream/api.js';
import { UpstreamAuthenticationError, UpstreamNotFoundError, UpstreamServerError } from '../../../src/upstream/errors.js';

const schema = buildSchema();
const route = 'GET /v1/currencies';
const caller = (name: string) => ({ apiKey: `sk_sandbox_${name}`, callerId: keyId(`sk_sandbox_${name}`) });

type Answer = () => Promise<unknown>;

function setup(
  env: Record<string, string> = {},
  trusted: { resolve(body: Record<string, unknown>): string | null; size: number } | null = null,
  keyOptions: { rejectedTtlMs?: number; max?: number } = {},
) {
  const config = loadConfig({ RATE_LIMIT_PER_MINUTE: '2', WS_CONNECTS_PER_MINUTE: '2', WS_SUBSCRIBE_PER_MINUTE: '2', KEY_REVALIDATE_MS: '60000', ...env });
  const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: config.limits.keyRevalidateMs, ...keyOptions });
  const limited: RateLimitName[] = [];
  const upstreamCalls: string[] = [];
  let currencies: Answer = async () => [];
  let account: Answer = async () => ({ id: 7 });
  const upstream = {
    forKey: (apiKey: string) =>
      ({
        currencies: { list: () => (upstreamCalls.push(`currencies ${apiKey}`), currencies()) },
        accounts: { current: () => (upstreamCalls.push(`account ${apiKey}`), account()) },
      }) as unknown as PaymentsApi,
  };
  const documents = documentCheck(schema, {
    maxTokens: config.limits.maxTokens,
    rules: documentRules(config.limits),
    check: operationCheck(schema, config.limits, config.pagination),
    maxResponseBytes: 1_000_000,
    trusted,
  });
  const streams = { rules: documents.rules, refusedRootFields: [] as string[], validated: validatedDocuments({ maxBytes: 32 * 1024 * 1024, callerShare: 0.25 }) };
  const admission = createAdmission({
    config,
    keys,
    upstream,
    logger: createLogger('silent'),
    documents,
    streams,
    redis: null,
    onRateLimited: (limit) => void limited.push(limit),
  });
  opened.push(admission);
  return {
    admission,
    keys,
    limited,
    upstreamCalls,
    streams,
    answerCurrencies: (a: Answer) => void (currencies = a),
    answerAccount: (a: Answer) => void (account = a),
  };
}

const opened: Admission[] = [];
afterEach(async () => {
  for (const a of opened.splice(0)) await a.close();
});

const flush = () => new Promise((r) => setImmediate(r));

describe('admission: the caller', () => {
  it('no header is no caller; a key that can never work keeps its own refusal', () => {
    const { admission } = setup();
    expect(admission.caller(undefined)).toBeNull();
    const malformed = admission.caller('Bearer nope') as GraphQLError;
    expect(malformed.extensions.code).toBe('UNAUTHENTICATED');
    expect(malformed.message).toMatch(/malformed/);
    expect((admission.caller('Bearer sk_live_abc') as GraphQLError).extensions.code).toBe('FORBIDDEN');
  });

  it('a key revoked lately is refused with its own message before anything else', () => {
    const { admission, keys } = setup();
    const c = caller('revoked');
    expect(admission.caller(`Bearer ${c.apiKey}`)).toEqual(c);
    keys.revoke(c.callerId);
    const refused = admission.caller(`Bearer ${c.apiKey}`) as GraphQLError;
    expect(refused).toBeInstanceOf(GraphQLError);
    expect(refused.message).toBe(REVOKED_KEY_MESSAGE);
    expect(refused.extensions).toMatchObject({ code: 'UNAUTHENTICATED', http: { status: 401 } });
  });
});

describe('admission: rates', () => {
  it('a proven key spends its own rate only, refused "by key" and counted as operations', async () => {
    const { admission, keys, limited } = setup();
    const c = caller('known');
    keys.accept(c.callerId);
    expect(await admission.operation(c, '10.0.0.1')).toBeNull();
    expect(await admission.operation(c, '10.0.0.1')).toBeNull();
    const refused = await admission.operation(c, '10.0.0.1');
    expect(refused).toEqual({ retryAfterSeconds: 60, by: 'key' });
    expect(limited).toEqual(['operations']);
    // Its address was never charged: another caller from there still has its whole budget.
    expect(await admission.operation(null, '10.0.0.1')).toBeNull();
    expect(await admission.operation(null, '10.0.0.1')).toBeNull();
  });

  it('no key spends the address\'s rate, refused "by address"', async () => {
    const { admission } = setup();
    await admission.operation(null, '10.0.0.2');
    await admission.operation(null, '10.0.0.2');
    expect(await admission.operation(null, '10.0.0.2')).toEqual({ retryAfterSeconds: 60, by: 'address' });
    expect(await admission.operation(null, '10.0.0.3')).toBeNull();
  });

  it('keys nobody proved spend their address\'s rate too: fresh keys buy no fresh rate', async () => {
    const { admission, limited } = setup();
    expect(await admission.operation(caller('fresh-1'), '10.0.0.4')).toBeNull();
    expect(await admission.operation(caller('fresh-2'), '10.0.0.4')).toBeNull();
    expect(await admission.operation(caller('fresh-3'), '10.0.0.4')).toEqual({ retryAfterSeconds: 60, by: 'address' });
    expect(limited).toEqual(['operations']);
  });

  it('connections are counted per address', async () => {
    const { admission, limited } = setup();
    expect(await admission.connection('10.0.0.5')).toBeNull();
    expect(await admission.connection('10.0.0.5')).toBeNull();
    expect(await admission.connection('10.0.0.5')).toEqual({ retryAfterSeconds: 60, by: 'address' });
    expect(await admission.connection('10.0.0.6')).toBeNull();
    expect(limited).toEqual(['ws_connect']);
  });

  it('streams: per key and transport, named by transport; a proven key is not charged to its address', async () => {
    const { admission, keys, limited } = setup();
    const c = caller('streams');
    keys.accept(c.callerId);
    for (let i = 0; i < 2; i += 1) {
      expect(await admission.stream('ws', c, '10.0.0.7')).toBeNull();
      expect(await admission.stream('sse', c, '10.0.0.7')).toBeNull();
    }
    expect(await admission.stream('ws', c, '10.0.0.7')).toEqual({ retryAfterSeconds: 60, by: 'key' });
    expect(await admission.stream('sse', c, '10.0.0.7')).toEqual({ retryAfterSeconds: 60, by: 'key' });
    expect(limited).toEqual(['ws_subscribe', 'sse_subscribe']);
  });

  it('the pace of new streams is per key, not per address: two keys from one address, one key from two', async () => {
    const { admission, keys, limited } = setup();
    const [a, b] = [caller('pace-a'), caller('pace-b')];
    keys.accept(a.callerId);
    keys.accept(b.callerId);
    // Two proven keys behind one address (a NAT, a router) each get their own budget.
    for (const c of [a, b]) for (let i = 0; i < 2; i += 1) expect(await admission.stream('ws', c, '10.0.0.20')).toBeNull();
    // One key spent from one address is spent from another too.
    expect(await admission.stream('ws', a, '10.0.0.21')).toEqual({ retryAfterSeconds: 60, by: 'key' });
    expect(await admission.stream('ws', b, '10.0.0.20')).toEqual({ retryAfterSeconds: 60, by: 'key' });
    expect(limited).toEqual(['ws_subscribe', 'ws_subscribe']);
  });

  it('callback subscriptions have their own per-key budget, named callback_subscribe', async () => {
    const { admission, keys, limited } = setup();
    const c = caller('callbacks');
    keys.accept(c.callerId);
    for (let i = 0; i < 2; i += 1) expect(await admission.stream('sse', c, '10.0.0.9')).toBeNull();
    // The SSE budget spent leaves the callback one whole.
    for (let i = 0; i < 2; i += 1) expect(await admission.stream('callback', c, '10.0.0.9')).toBeNull();
    expect(await admission.stream('callback', c, '10.0.0.9')).toEqual({ retryAfterSeconds: 60, by: 'key' });
    expect(limited).toEqual(['callback_subscribe']);
  });

  it('streams of keys nobody proved spend their address\'s budget of streams', async () => {
    const { admission, limited } = setup();
    expect(await admission.stream('ws', caller('s1'), '10.0.0.8')).toBeNull();
    expect(await admission.stream('sse', caller('s2'), '10.0.0.8')).toBeNull();
    expect(await admission.stream('sse', caller('s3'), '10.0.0.8')).toEqual({ retryAfterSeconds: 60, by: 'address' });
    expect(limited).toEqual(['sse_subscribe']);
  });
});

describe('admission: a streaming transport\'s document', () => {
  const query = '{ currencies { code } }';

  it('runs the query it is given and says BAD_USER_INPUT when there is none', () => {
    const { admission, keys } = setup();
    const c = caller('doc');
    keys.accept(c.callerId);
    const admitted = admission.document({ query }, undefined, {}, c);
    expect('document' in admitted && admitted.source).toBe(query);
    const none = admission.document({}, undefined, {}, c);
    expect('errors' in none && none.errors.map((e) => [e.message, e.extensions.code])).toEqual([['The request has no query.', 'BAD_USER_INPUT']]);
  });

  it('with trusted documents, runs what the manifest resolves and refuses the rest as PERSISTED_QUERY_NOT_FOUND', () => {
    const trusted = { resolve: (body: Record<string, unknown>) => (body.documentId === 'known' ? query : null), size: 1 };
    const { admission } = setup({}, trusted);
    const c = caller('trusted');
    const admitted = admission.document({ documentId: 'known' }, undefined, {}, c);
    expect('document' in admitted && admitted.source).toBe(query);
    const refused = admission.document({ query }, undefined, {}, c);
    expect('errors' in refused && refused.errors.map((e) => [e.message, e.extensions.code])).toEqual([
      ['Only trusted documents run here: send a documentId or persisted-query hash from the manifest.', 'PERSISTED_QUERY_NOT_FOUND'],
    ]);
  });

  it('passes on the limits\' refusal, and remembers documents of proven keys only', () => {
    const { admission, keys, streams } = setup();
    const stranger = caller('stranger');
    expect('errors' in admission.document({ query: '{ nope }' }, undefined, {}, stranger)).toBe(true);
    admission.document({ query }, undefined, {}, stranger);
    expect(streams.validated.size).toBe(0);
    const known = caller('known-doc');
    keys.accept(known.callerId);
    admission.document({ query }, undefined, {}, known);
    expect(streams.validated.size).toBe(1);
  });
});

describe("admission: a streaming transport's extensions.cost", () => {
  const priced = parse('query ($n: Int) { transactions(first: $n) { nodes { id } } }');

  it('prices the operation as HTTP does, with the upstream calls its gate counted and the maximum', () => {
    const { admission } = setup({ MAX_OPERATION_COST: '900' });
    const { cost } = admission.documents.check.price(priced, undefined, { n: 50 });
    expect(cost).toBeGreaterThan(1);
    expect(admission.cost(priced, undefined, { n: 50 }, { upstreamGate: { calls: 3 } as UpstreamGate })).toEqual({ requestedQueryCost: cost, actualQueryCost: 3, maximumAvailable: 900 });
    // No gate yet: no upstream call counted.
    expect(admission.cost(priced, undefined, { n: 50 }, undefined)).toEqual({ requestedQueryCost: cost, actualQueryCost: 0, maximumAvailable: 900 });
  });

  it('is null when COST_EXTENSIONS is off, and when the variables leave the operation unpriced', () => {
    expect(setup({ COST_EXTENSIONS: 'false' }).admission.cost(priced, undefined, { n: 50 }, undefined)).toBeNull();
    expect(setup().admission.cost(priced, undefined, { n: 'many' }, undefined)).toBeNull();
  });
});

describe('admission: the account behind a key', () => {
  it('asks once while the key stays proven, and proves the key by asking', async () => {
    const { admission, keys, upstreamCalls } = setup();
    const c = caller('account');
    expect(await admission.account(c)).toBe(7);
    expect(keys.isProven(c.callerId)).toBe(true);
    expect(await admission.account(c)).toBe(7);
    expect(upstreamCalls).toEqual([`account ${c.apiKey}`]);
  });

  // The proof lapses with no revocation heard here: the upstream revoked the key where no instance saw it.
  it('asks again once the key is no longer proven (revoked meanwhile)', async () => {
    const { admission, keys, upstreamCalls, answerAccount } = setup({ KEY_REVALIDATE_MS: '100' });
    const c = caller('account-revoked');
    expect(await admission.account(c)).toBe(7);
    answerAccount(async () => {
      throw new UpstreamAuthenticationError({ route, statusCode: 401 });
    });
    expect(await admission.account(c)).toBe(7);
    await new Promise((r) => setTimeout(r, 150));
    expect(keys.isProven(c.callerId)).toBe(false);
    expect(keys.isRevoked(c.callerId)).toBe(false);
    await expect(admission.account(c)).rejects.toBeInstanceOf(UpstreamAuthenticationError);
    expect(keys.isRevoked(c.callerId)).toBe(true);
    expect(upstreamCalls).toEqual([`account ${c.apiKey}`, `account ${c.apiKey}`]);
  });

  it('forgets the account of a key revoked here at once', async () => {
    const { admission, keys, upstreamCalls, answerAccount } = setup();
    const c = caller('account-revoked-here');
    expect(await admission.account(c)).toBe(7);
    keys.revoke(c.callerId);
    answerAccount(async () => ({ id: 8 }));
    expect(await admission.account(c)).toBe(8);
    expect(upstreamCalls).toHaveLength(2);
  });

  it('remembers the accounts of 10,000 keys: the oldest is forgotten for a new one', async () => {
    const { admission, upstreamCalls } = setup({}, null, { max: 20_000 });
    const callers = Array.from({ length: 10_001 }, (_, i) => caller(`many${i}`));
    for (const c of callers.slice(0, 10_000)) await admission.account(c);
    await admission.account(callers[0]!);
    expect(upstreamCalls).toHaveLength(10_000);
    await admission.account(callers[10_000]!);
    await admission.account(callers[1]!);
    expect(upstreamCalls).toHaveLength(10_001);
    await admission.account(callers[0]!);
    expect(upstreamCalls).toHaveLength(10_002);
    expect(upstreamCalls.at(-1)).toBe(`account ${callers[0]!.apiKey}`);
  });

  it('forgets a failed look-up; a 401 revokes the key, a 404 proves it', async () => {
    const { admission, keys, upstreamCalls, answerAccount } = setup();
    const c = caller('account-fails');
    keys.accept(c.callerId);
    answerAccount(async () => {
      throw new UpstreamServerError({ route, statusCode: 500 });
    });
    await expect(admission.account(c)).rejects.toBeInstanceOf(UpstreamServerError);
    answerAccount(async () => ({ id: 9 }));
    expect(await admission.account(c)).toBe(9);
    expect(upstreamCalls).toHaveLength(2);

    const refused = caller('account-401');
    answerAccount(async () => {
      throw new UpstreamAuthenticationError({ route, statusCode: 401 });
    });
    await expect(admission.account(refused)).rejects.toBeInstanceOf(UpstreamAuthenticationError);
    expect(keys.isRevoked(refused.callerId)).toBe(true);

    const taken = caller('account-404');
    answerAccount(async () => {
      throw new UpstreamNotFoundError({ route, statusCode: 404 });
    });
    await expect(admission.account(taken)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    expect(keys.isProven(taken.callerId)).toBe(true);
  });
});

describe('admission: proving a key', () => {
  it('a proven key needs no call; an unproven one makes one call, shared by everyone asking meanwhile', async () => {
    const { admission, keys, upstreamCalls, answerCurrencies } = setup();
    const c = caller('prove');
    let answer: (v: unknown) => void = () => {};
    answerCurrencies(() => new Promise((r) => (answer = r)));
    const one = admission.prove(c);
    const two = admission.prove(c);
    expect(admission.proven(c)).toBe(false);
    answer([]);
    expect(await Promise.all([one, two])).toEqual([true, true]);
    expect(upstreamCalls).toEqual([`currencies ${c.apiKey}`]);
    expect(admission.proven(c)).toBe(true);
    expect(await admission.prove(c)).toBe(true);
    expect(upstreamCalls).toHaveLength(1);
    keys.revoke(c.callerId);
    expect(admission.proven(c)).toBe(false);
  });

  it('a refused proof is false (a 401 revokes the key), and the next proof asks again', async () => {
    const { admission, keys, upstreamCalls, answerCurrencies } = setup();
    const c = caller('prove-401');
    answerCurrencies(async () => {
      throw new UpstreamAuthenticationError({ route, statusCode: 401 });
    });
    expect(await admission.prove(c)).toBe(false);
    expect(keys.isRevoked(c.callerId)).toBe(true);
    answerCurrencies(async () => {
      throw new UpstreamServerError({ route, statusCode: 500 });
    });
    const d = caller('prove-500');
    expect(await admission.prove(d)).toBe(false);
    expect(await admission.prove(d)).toBe(false);
    expect(upstreamCalls).toEqual([`currencies ${c.apiKey}`, `currencies ${d.apiKey}`, `currencies ${d.apiKey}`]);
  });
});

describe('admission: live streams', () => {
  it('ends every stream of a key once when the key is revoked, and spares other keys', () => {
    const { admission, keys } = setup();
    const c = caller('live');
    const other = caller('live-other');
    const ended: string[] = [];
    admission.live(c, () => ended.push('a'));
    admission.live(c, () => ended.push('b'));
    admission.live(other, () => ended.push('other'));
    keys.revoke(c.callerId);
    keys.revoke(c.callerId);
    expect(ended).toEqual(['a', 'b']);
  });

  it('a released stream is not ended; the key\'s other streams still are', () => {
    const { admission, keys } = setup();
    const c = caller('live-release');
    const ended: string[] = [];
    const release = admission.live(c, () => ended.push('released'));
    admission.live(c, () => ended.push('kept'));
    release();
    keys.revoke(c.callerId);
    expect(ended).toEqual(['kept']);
  });

  it('a key with every stream released is no longer watched: a new stream after that is ended on revocation', () => {
    const { admission, keys } = setup();
    const c = caller('live-again');
    const ended: string[] = [];
    admission.live(c, () => ended.push('first'))();
    admission.live(c, () => ended.push('second'));
    keys.revoke(c.callerId);
    expect(ended).toEqual(['second']);
  });

  it('a stream opened for a key revoked meanwhile ends at once, once', async () => {
    const { admission, keys } = setup();
    const c = caller('live-late');
    keys.revoke(c.callerId);
    const ended: string[] = [];
    admission.live(c, () => ended.push('late'));
    expect(ended).toEqual([]);
    await flush();
    expect(ended).toEqual(['late']);
    keys.revoke(c.callerId);
    expect(ended).toEqual(['late']);
  });

  // Real timers at a 2 s interval (a look every 500 ms): timers fire late, never early, so each bound below
  // leaves the late side 300 ms or more, and a look once per interval, or a proof only after the lapse, misses it.
  it('looks at a live key every quarter of KEY_REVALIDATE_MS and proves it again before its proof lapses: a 401 ends its streams within the interval', async () => {
    const { admission, keys, answerCurrencies } = setup({ KEY_REVALIDATE_MS: '2000' });
    const c = caller('live-prove');
    const proofs: { at: number; stillProven: boolean }[] = [];
    let refuse = false;
    answerCurrencies(async () => {
      proofs.push({ at: performance.now(), stillProven: keys.isProven(c.callerId) });
      if (refuse) throw new UpstreamAuthenticationError({ route, statusCode: 401 });
      return [];
    });
    const ended: number[] = [];
    const opened = performance.now();
    admission.live(c, () => ended.push(performance.now()));

    // Nobody proved the key: the first look, a quarter in, proves it.
    await vi.waitFor(() => expect(proofs).toHaveLength(1), { timeout: 3_000, interval: 10 });
    expect(proofs[0]!.at - opened).toBeGreaterThanOrEqual(450);
    expect(proofs[0]!.at - opened).toBeLessThan(1_000);
    await vi.waitFor(() => expect(keys.isProven(c.callerId)).toBe(true));
    refuse = true;
    const armed = performance.now();

    // Proven again at the look three quarters in, the last before the proof lapses: the key still proven then.
    await vi.waitFor(() => expect(ended).toHaveLength(1), { timeout: 4_000, interval: 10 });
    expect(proofs).toHaveLength(2);
    expect(proofs[1]!.stillProven).toBe(true);
    expect(proofs[1]!.at - proofs[0]!.at).toBeGreaterThanOrEqual(1_450);
    expect(proofs[1]!.at - proofs[0]!.at).toBeLessThan(1_800);
    expect(ended[0]! - armed).toBeLessThan(2_000);
  });

  it('a stream opened for a revoked key and revoked again before it ends is ended once', async () => {
    const { admission, keys } = setup();
    const c = caller('live-twice');
    keys.revoke(c.callerId);
    const ended: string[] = [];
    admission.live(c, () => ended.push('ended'));
    keys.revoke(c.callerId);
    await flush();
    expect(ended).toEqual(['ended']);
  });

  it('a release after the key was revoked is harmless, and leaves a later stream of the key watched', () => {
    // Refused keys not remembered: a new stream of the key opens as a new watch.
    const { admission, keys } = setup({}, null, { rejectedTtlMs: 0 });
    const c = caller('live-late-release');
    const ended: string[] = [];
    const releaseA = admission.live(c, () => ended.push('a'));
    keys.revoke(c.callerId);
    admission.live(c, () => ended.push('b'));
    expect(() => releaseA()).not.toThrow();
    keys.revoke(c.callerId);
    expect(ended).toEqual(['a', 'b']);
    const releaseC = admission.live(caller('gone'), () => {});
    keys.revoke(caller('gone').callerId);
    expect(() => releaseC()).not.toThrow();
  });

  it('a key whose streams were all released is no longer proven in the background', async () => {
    const { admission, upstreamCalls } = setup({ KEY_REVALIDATE_MS: '200' });
    admission.live(caller('released'), () => {})();
    await new Promise((r) => setTimeout(r, 300));
    expect(upstreamCalls).toEqual([]);
  });

  it('proves at most 16 live keys at once; the rest wait for a tick with room', async () => {
    const { admission, upstreamCalls, answerCurrencies } = setup({ KEY_REVALIDATE_MS: '200' });
    answerCurrencies(() => new Promise(() => {}));
    for (let i = 0; i < 20; i += 1) admission.live(caller(`many-live${i}`), () => {});
    await vi.waitFor(() => expect(upstreamCalls).toHaveLength(16), { timeout: 2_000, interval: 10 });
    await new Promise((r) => setTimeout(r, 200));
    expect(upstreamCalls).toHaveLength(16);
  });

  it('stops proving and listening once closed', async () => {
    const { admission, keys, upstreamCalls } = setup({ KEY_REVALIDATE_MS: '200' });
    const c = caller('live-closed');
    const ended: string[] = [];
    admission.live(c, () => ended.push('ended'));
    await admission.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(upstreamCalls).toEqual([]);
    keys.revoke(c.callerId);
    expect(ended).toEqual([]);
  });
});

describe('admission: opening a stream through the door', () => {
  const SUBSCRIPTION = 'subscription { transactionUpdated(id: "tr_1") { id status } }';
  const request = (c: ReturnType<typeof caller>, over: Partial<StreamRequest> = {}): StreamRequest => ({
    transport: 'sse',
    caller: c,
    address: '10.0.0.9',
    payload: { query: SUBSCRIPTION },
    operationName: undefined,
    variables: {},
    subscriptionsOnly: true,
    onRevoked: () => {},
    ...over,
  });

  it("opens with the key's account from the upstream, counts it live, and ends it when the key is revoked", async () => {
    const { admission, keys, upstreamCalls } = setup({ WS_MAX_SUBSCRIPTIONS_PER_KEY: '5' });
    const c = caller('open');
    let revoked = 0;
    const opening = await admission.openStream(request(c, { onRevoked: () => revoked++ }));
    expect('stream' in opening && opening.stream).toMatchObject({ caller: c, accountId: 7, operation: { operation: 'subscription' } });
    expect(upstreamCalls).toEqual([`account ${c.apiKey}`]);
    expect(admission.liveStreams(c)).toBe(1);
    keys.revoke(c.callerId);
    expect(revoked).toBe(1);
    if ('stream' in opening) opening.stream.release();
    expect(admission.liveStreams(c)).toBe(0);
  });

  it("refuses a revoked key, the key's stream pace, and a bad document, each by its step and with no account read", async () => {
    const { admission, keys, upstreamCalls } = setup({ WS_MAX_SUBSCRIPTIONS_PER_KEY: '5' });
    const revoked = caller('open-revoked');
    keys.revoke(revoked.callerId);
    expect(await admission.openStream(request(revoked))).toEqual({ refused: { kind: 'revoked' } });

    const bad = caller('open-bad');
    const refused = await admission.openStream(request(bad, { address: '10.0.0.10', payload: { query: 'subscription { nope }' } }));
    expect('refused' in refused && refused.refused.kind).toBe('document');

    // WS_SUBSCRIBE_PER_MINUTE is 2 for a proven key's SSE streams: the third is refused by its pace.
    const paced = caller('open-paced');
    keys.accept(paced.callerId);
    for (let i = 0; i < 2; i++) {
      const opening = await admission.openStream(request(paced, { payload: { query: '{ currencies { iso } }' } }));
      expect(opening).toEqual({ refused: { kind: 'not-subscription' } });
    }
    expect(await admission.openStream(request(paced))).toMatchObject({ refused: { kind: 'rate', refusal: { by: 'key' } } });
    expect(upstreamCalls).toEqual([]);
  });

  it('a key revoked where no instance saw it opens no stream once its proof lapsed: the account is asked again, and its 401 refuses', async () => {
    const { admission, keys, upstreamCalls, answerAccount } = setup({ KEY_REVALIDATE_MS: '100', WS_MAX_SUBSCRIPTIONS_PER_KEY: '5', WS_SUBSCRIBE_PER_MINUTE: '10' });
    const c = caller('open-lapsed');
    const first = await admission.openStream(request(c));
    expect('stream' in first && first.stream.accountId).toBe(7);
    // Released, so no background proof runs: only the door can find the revocation out.
    if ('stream' in first) first.stream.release();
    answerAccount(async () => {
      throw new UpstreamAuthenticationError({ route, statusCode: 401 });
    });
    await new Promise((r) => setTimeout(r, 150));
    const second = await admission.openStream(request(c));
    expect('refused' in second && second.refused.kind).toBe('account');
    expect(keys.isRevoked(c.callerId)).toBe(true);
    expect(admission.liveStreams(c)).toBe(0);
    expect(await admission.openStream(request(c))).toEqual({ refused: { kind: 'revoked' } });
    expect(upstreamCalls).toEqual([`account ${c.apiKey}`, `account ${c.apiKey}`]);
  });
});
