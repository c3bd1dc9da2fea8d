/**
 * The one sequence every streaming transport opens a stream through (access/stream-admission.ts), over steps
 * that record what was asked: its order (no rate spent past the cap, no parse past the rate, no upstream call
 * past the document), one per-key tally whichever transport asks, and one idempotent release. The transports'
 * suites (test/security/stream-slots.test.ts, test/unit/http/subscription-callback*) check it over the wire.
 */
import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { streamDoor, type RateRefusal, type StreamRequest, type StreamTransport } from '../../../src/access/stream-admission.js';
import type { Caller } from '../../../src/access/auth.js';

const caller = (n: number): Caller => ({ apiKey: `sk_sandbox_k${n}`, callerId: `caller-${n}` });
const SUBSCRIPTION = 'subscription { paymentEvent { id } }';

function door(maxPerKey = 2) {
  const asked: string[] = [];
  const state = {
    revoked: new Set<string>(),
    limited: null as RateRefusal | null,
    account: (): Promise<number> => Promise.resolve(7),
    ends: [] as (() => void)[],
    liveReleased: 0,
  };
  const d = streamDoor({
    maxPerKey,
    isRevoked: (id) => (asked.push('revoked'), state.revoked.has(id)),
    stream: async (transport) => (asked.push(`rate:${transport}`), state.limited),
    document: (payload) => {
      asked.push('document');
      const query = payload.query as string;
      if (query.includes('bad')) return { errors: [new GraphQLError('Too deep.', { extensions: { code: 'DEPTH_LIMIT' } })] };
      return { document: parse(query), source: query };
    },
    account: () => (asked.push('account'), state.account()),
    live: (_caller, end) => {
      asked.push('live');
      state.ends.push(end);
      return () => void (state.liveReleased += 1);
    },
  });
  const open = (transport: StreamTransport, over: Partial<StreamRequest> = {}) =>
    d.open({ transport, caller: caller(1), address: '10.0.0.1', payload: { query: SUBSCRIPTION }, operationName: undefined, variables: {}, subscriptionsOnly: transport !== 'ws', onRevoked: () => {}, ...over });
  return { d, asked, state, open };
}

describe('openStream: one order', () => {
  it('runs revoked, cap, rate, document, account, live, in that order, and hands over the document and account', async () => {
    const { asked, open } = door();
    const opened = await open('sse');
    expect(asked).toEqual(['revoked', 'rate:sse', 'document', 'account', 'live']);
    expect('stream' in opened && opened.stream).toMatchObject({ accountId: 7, caller: caller(1), operation: { operation: 'subscription' } });
  });

  it('a revoked key is refused before anything is counted or asked', async () => {
    const { d, asked, state, open } = door();
    state.revoked.add('caller-1');
    expect(await open('ws')).toEqual({ refused: { kind: 'revoked' } });
    expect(asked).toEqual(['revoked']);
    expect(d.liveOf('caller-1')).toBe(0);
  });

  it('a key at its cap spends no rate and parses nothing', async () => {
    const { asked, open } = door(1);
    await open('ws');
    asked.length = 0;
    expect(await open('sse')).toEqual({ refused: { kind: 'cap', limit: 1 } });
    expect(asked).toEqual(['revoked']);
  });

  it('past the rate nothing is parsed; past a refused document no upstream call is made; each gives the slot back', async () => {
    const { d, asked, state, open } = door();
    state.limited = { retryAfterSeconds: 9, by: 'key' };
    expect(await open('callback')).toEqual({ refused: { kind: 'rate', refusal: { retryAfterSeconds: 9, by: 'key' } } });
    expect(asked).toEqual(['revoked', 'rate:callback']);
    state.limited = null;
    asked.length = 0;
    const refused = await open('callback', { payload: { query: 'subscription { bad }' } });
    expect('refused' in refused && refused.refused.kind).toBe('document');
    expect(asked).toEqual(['revoked', 'rate:callback', 'document']);
    asked.length = 0;
    expect(await open('sse', { payload: { query: '{ currencies { code } }' } })).toEqual({ refused: { kind: 'not-subscription' } });
    expect(asked).not.toContain('account');
    expect(d.liveOf('caller-1')).toBe(0);
  });

  it('graphql-ws runs queries too, and its account (asked at connect) is not asked again', async () => {
    const { asked, open } = door();
    const opened = await open('ws', { payload: { query: '{ currencies { code } }' }, accountId: 42 });
    expect('stream' in opened && opened.stream.accountId).toBe(42);
    expect(asked).toEqual(['revoked', 'rate:ws', 'document', 'live']);
  });

  it('a failed account look-up is handed to the transport, the slot given back', async () => {
    const { d, state, open } = door();
    const failure = new Error('upstream down');
    state.account = () => Promise.reject(failure);
    expect(await open('sse')).toEqual({ refused: { kind: 'account', error: failure } });
    expect(d.liveOf('caller-1')).toBe(0);
  });
});

describe('openStream: a client gone or an operation missing', () => {
  it('a client already gone is refused before anything is counted or asked', async () => {
    const { d, asked, open } = door();
    const gone = new AbortController();
    gone.abort();
    expect(await open('sse', { signal: gone.signal })).toEqual({ refused: { kind: 'gone' } });
    expect(asked).toEqual(['revoked']);
    expect(d.liveOf('caller-1')).toBe(0);
  });

  it('a client that leaves while its rate is counted is refused before its document is parsed', async () => {
    const gone = new AbortController();
    const asked: string[] = [];
    const d = streamDoor({
      maxPerKey: 1,
      isRevoked: () => false,
      stream: async () => {
        asked.push('rate');
        gone.abort();
        return null;
      },
      document: (payload) => (asked.push('document'), { document: parse(payload.query as string), source: payload.query as string }),
      account: () => (asked.push('account'), Promise.resolve(7)),
      live: () => (asked.push('live'), () => {}),
    });
    const request = { transport: 'sse' as const, caller: caller(1), address: '10.0.0.1', payload: { query: SUBSCRIPTION }, operationName: undefined, variables: {}, subscriptionsOnly: true, onRevoked: () => {} };
    expect(await d.open({ ...request, signal: gone.signal })).toEqual({ refused: { kind: 'gone' } });
    expect(asked).toEqual(['rate']);
    expect(d.liveOf('caller-1')).toBe(0);
  });

  it('an operation name the document does not hold is no subscription, refused without a throw', async () => {
    const { asked, open } = door();
    const payload = { query: 'subscription A { paymentEvent { id } } subscription B { paymentEvent { id } }' };
    expect(await open('sse', { payload, operationName: 'C' })).toEqual({ refused: { kind: 'not-subscription' } });
    expect(asked).not.toContain('account');
    // graphql-ws opens it, and graphql-js reports the missing operation when it runs.
    const opened = await open('ws', { payload, operationName: 'C' });
    expect('stream' in opened && opened.stream.operation).toBeUndefined();
  });
});

describe('openStream: one tally, one release', () => {
  it('counts one key across WebSocket, SSE and callbacks together', async () => {
    const { d, open } = door(2);
    const ws = await open('ws');
    expect('stream' in ws).toBe(true);
    expect('stream' in (await open('sse'))).toBe(true);
    expect(await open('callback')).toEqual({ refused: { kind: 'cap', limit: 2 } });
    // Another key has its own slots.
    expect('stream' in (await open('callback', { caller: caller(2) }))).toBe(true);
    expect(d.liveOf('caller-1')).toBe(2);
    // A release given twice frees one slot, and ends the live registration once.
    if ('stream' in ws) {
      ws.stream.release();
      ws.stream.release();
    }
    expect(d.liveOf('caller-1')).toBe(1);
    expect('stream' in (await open('callback'))).toBe(true);
    expect(await open('ws')).toEqual({ refused: { kind: 'cap', limit: 2 } });
  });

  it('the release ends the live registration once', async () => {
    const { state, open } = door();
    const opened = await open('sse');
    if (!('stream' in opened)) throw new Error('not opened');
    opened.stream.release();
    opened.stream.release();
    expect(state.liveReleased).toBe(1);
  });

  it('a client that leaves during the account look-up gets its slot back at once, and nothing is registered', async () => {
    const { d, asked, state, open } = door(1);
    let answer!: (id: number) => void;
    state.account = () => new Promise((r) => (answer = r));
    const gone = new AbortController();
    const pending = open('sse', { signal: gone.signal });
    await new Promise((r) => setImmediate(r));
    expect(d.liveOf('caller-1')).toBe(1);
    gone.abort();
    expect(d.liveOf('caller-1')).toBe(0);
    answer(7);
    expect(await pending).toEqual({ refused: { kind: 'gone' } });
    expect(asked).not.toContain('live');
    expect(d.liveOf('caller-1')).toBe(0);
  });

  it("a transport's own slot is taken after the key's cap and given back with it", async () => {
    const { open } = door(5);
    let held = 0;
    const slot = { take: () => (held < 1 ? (held += 1, true) : false), give: () => void (held -= 1) };
    const first = await open('callback', { slot });
    expect(held).toBe(1);
    expect(await open('callback', { slot })).toEqual({ refused: { kind: 'slot' } });
    if ('stream' in first) first.stream.release();
    expect(held).toBe(0);
    const failing = await open('callback', { slot, payload: { query: 'subscription { bad }' } });
    expect('refused' in failing).toBe(true);
    expect(held).toBe(0);
  });
});

describe('openStream: a step that throws', () => {
  it('gives the key slot and the transport slot back, and passes the error on', async () => {
    let held = 0;
    const slot = { take: () => ((held += 1), true), give: () => void (held -= 1) };
    const broken = new Error('rate store broke');
    let rate = (): Promise<RateRefusal | null> => Promise.reject(broken);
    // No signal, as for a router callback: nothing but the door itself could give these back.
    const d = streamDoor({
      maxPerKey: 1,
      isRevoked: () => false,
      stream: () => rate(),
      document: (payload) => ({ document: parse(payload.query as string), source: payload.query as string }),
      account: () => Promise.resolve(7),
      live: () => () => {},
    });
    const request = { transport: 'callback' as const, caller: caller(1), address: '10.0.0.1', payload: { query: SUBSCRIPTION }, operationName: undefined, variables: {}, subscriptionsOnly: true, onRevoked: () => {}, slot };
    await expect(d.open(request)).rejects.toBe(broken);
    expect(d.liveOf('caller-1')).toBe(0);
    expect(held).toBe(0);
    // With a cap of one, the key opens again: nothing was left reserved.
    rate = () => Promise.resolve(null);
    expect('stream' in (await d.open(request))).toBe(true);
    expect(held).toBe(1);
  });
});
