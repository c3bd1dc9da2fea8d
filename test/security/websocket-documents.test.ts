/**
 * Over WebSocket, graphql-ws parses, validates and answers by itself: the
 * same document limits as HTTP must apply there too (tokens, depth, aliases,
 * cost, mutation fields, introspection off, no suggestions, response size),
 * each refusal before any upstream call; and the per-key cap on live
 * operations must hold against a burst of frames and not leak on refusals.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const wsUrl = (stack: Stack) => stack.gateway.url.replace(/^http/, 'ws');

interface Frame {
  type: string;
  id?: string;
  payload?: unknown;
}

/** A raw graphql-transport-ws connection: frames can be sent in one burst, and every frame received is kept. */
async function rawConnection(url: string, key: string) {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  const frames: Frame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
  await waitFor(() => frames.some((f) => f.type === 'connection_ack'));
  const subscribeFrame = (id: string, query: string, variables?: Record<string, unknown>) => JSON.stringify({ type: 'subscribe', id, payload: { query, variables } });
  return {
    frames,
    /** Every frame in one write, as a client (or attacker) pipelining them would. */
    burst(messages: string[]) {
      const socket = (ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
      socket.cork();
      for (const m of messages) ws.send(m);
      socket.uncork();
    },
    subscribeFrame,
    /** The first `next` or `error` frame for this id. */
    async answer(id: string, query: string, variables?: Record<string, unknown>) {
      ws.send(subscribeFrame(id, query, variables));
      await waitFor(() => frames.some((f) => f.id === id && (f.type === 'next' || f.type === 'error')));
      return frames.find((f) => f.id === id && (f.type === 'next' || f.type === 'error'))!;
    },
    close: () => ws.terminate(),
  };
}

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const codesOf = (frame: Frame): unknown[] => {
  const errors = frame.type === 'error' ? (frame.payload as { extensions?: { code?: string } }[]) : ((frame.payload as { errors?: { extensions?: { code?: string } }[] }).errors ?? []);
  return errors.map((e) => e.extensions?.code);
};

describe('document limits over WebSocket', () => {
  let stack: Stack;
  const key = newKey('ws-docs');
  let transactionId: string;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        MAX_ALIASES: '3',
        MAX_QUERY_DEPTH: '4',
        MAX_QUERY_TOKENS: '400',
        MAX_OPERATION_COST: '60',
        MAX_MUTATION_FIELDS: '1',
        MAX_RESPONSE_BYTES: '2000',
        GRAPHQL_INTROSPECTION: 'false',
        GRAPHQL_SUGGESTIONS: 'false',
        WS_MAX_SUBSCRIPTIONS_PER_KEY: '3',
        RATE_LIMIT_PER_MINUTE: '0',
      },
    });
    transactionId = String((await factories(stack.emulator, key).transaction()).id);
  });
  afterAll(() => stack.stop());

  const refusedBeforeUpstream = async (query: string, code: string) => {
    const conn = await rawConnection(wsUrl(stack), key);
    await stack.resetCounts();
    const frame = await conn.answer('1', query);
    conn.close();
    expect(frame.type).toBe('error');
    const codes = codesOf(frame);
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes)).toEqual(new Set([code]));
    expect(await stack.upstreamCalls()).toBe(0);
    return frame;
  };

  it('aliases: 3 answer, 4 are refused', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `t${i}: transaction(id: "${transactionId}") { id }`).join(' ')} }`;
    const conn = await rawConnection(wsUrl(stack), key);
    const three = await conn.answer('ok', aliases(3));
    conn.close();
    expect(three.type).toBe('next');
    expect(codesOf(three)).toEqual([]);
    await refusedBeforeUpstream(aliases(4), 'GRAPHQL_VALIDATION_FAILED');
  });

  it('depth, tokens, cost and mutation fields are refused before any upstream call', async () => {
    await refusedBeforeUpstream('{ transactions(first: 1) { edges { node { customer { email } } } } }', 'GRAPHQL_VALIDATION_FAILED');
    await refusedBeforeUpstream(`{ ${'__typename '.repeat(500)} }`, 'GRAPHQL_PARSE_FAILED');
    const costly = await refusedBeforeUpstream('{ transactions(first: 60) { nodes { id } } }', 'OPERATION_TOO_COSTLY');
    expect((costly.payload as { extensions: Record<string, unknown> }[])[0]!.extensions).toMatchObject({ cost: 61, limit: 60 });
    // The HTTP status the refusal asks for is HTTP's business: a WebSocket error does not carry it.
    expect((costly.payload as { extensions: Record<string, unknown> }[])[0]!.extensions).not.toHaveProperty('http');
    const field = (i: number) => `m${i}: createCustomer(input: { firstname: "A", lastname: "B", email: "ws${i}@example.com" }) { customer { id } }`;
    await refusedBeforeUpstream(`mutation { ${field(1)} ${field(2)} }`, 'OPERATION_TOO_COSTLY');
  });

  it('introspection is off and validation messages carry no suggestions, as over HTTP', async () => {
    await refusedBeforeUpstream('{ __schema { types { name } } }', 'GRAPHQL_VALIDATION_FAILED');
    const typo = await refusedBeforeUpstream('{ transactoin(id: "1") { id } }', 'GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(typo.payload)).not.toMatch(/Did you mean/);
  });

  it('an answer over the response size cap becomes RESPONSE_TOO_LARGE', async () => {
    const bigKey = newKey('ws-big');
    const make = factories(stack.emulator, bigKey);
    for (let i = 0; i < 15; i++) await make.transaction();
    const conn = await rawConnection(wsUrl(stack), bigKey);
    const frame = await conn.answer('big', `{ transactions(first: 50) { nodes { id reference description createdAt updatedAt } } }`);
    conn.close();
    expect(codesOf(frame)).toEqual(['RESPONSE_TOO_LARGE']);
  });

  it('live operations per key hold against a burst, and refused documents free their slot', async () => {
    const burstKey = newKey('ws-burst');
    const conn = await rawConnection(wsUrl(stack), burstKey);
    // Three invalid documents first: refused, and their slots given back.
    for (const id of ['bad1', 'bad2', 'bad3']) await conn.answer(id, '{ nope }');
    const subscription = 'subscription ($id: ID) { transactionUpdated(id: $id) { status } }';
    conn.burst(Array.from({ length: 20 }, (_, i) => conn.subscribeFrame(`s${i}`, subscription, { id: transactionId })));
    await waitFor(() => conn.frames.filter((f) => f.id?.startsWith('s') && f.type === 'error').length >= 17);
    await new Promise((r) => setTimeout(r, 200));
    const refused = conn.frames.filter((f) => f.id?.startsWith('s') && f.type === 'error');
    expect(refused).toHaveLength(17);
    for (const frame of refused) expect(codesOf(frame)).toEqual(['RATE_LIMITED']);
    conn.close();
  });
});
