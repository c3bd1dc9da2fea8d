/**
 * One operation, one request id: in each of its log lines, on each of its
 * upstream requests, in the `extensions` of its errors and in the answer's
 * `x-request-id` header.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { factories } from '../support/factories.js';
import { emulatorAdmin, newKey } from '../support/harness.js';
import { wsClient } from '../realtime/support.js';
import { logSink, startRecordingProxy, type RecordingProxy } from './support.js';

const QUERY = 'query TxWithCustomer($id: ID!) { transaction(id: $id) { id customer { email } } }';

describe('request ids', () => {
  let emulator: RunningEmulator;
  let proxy: RecordingProxy;
  let upstream: UpstreamClient;
  let gateway: RunningGateway;
  const logs = logSink();
  const key = newKey('reqid');
  let txId: number;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, settleMs: 50 });
    const make = factories(emulator, key);
    txId = (await make.transaction({ customer: { id: (await make.customer()).id } })).id;
    proxy = await startRecordingProxy(emulator.url);
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: proxy.url, LOG_LEVEL: 'debug', OPERATION_DEADLINE_MS: '2000', MAX_RESPONSE_BYTES: '1024' });
    upstream = createUpstreamClient({ baseUrl: proxy.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
    gateway = await startGateway({ config, upstream, logger: createLogger('debug', { destination: logs }) });
  });

  afterAll(async () => {
    await gateway.stop();
    upstream.close();
    await proxy.close();
    await emulator.stop();
  });

  beforeEach(() => {
    proxy.requests.length = 0;
  });

  const post = async (headers: Record<string, string>) => {
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify({ query: QUERY, variables: { id: String(txId) } }),
    });
    return { header: res.headers.get('x-request-id'), body: (await res.json()) as { errors?: { extensions?: Record<string, unknown> }[] } };
  };

  it('puts the caller’s x-request-id in the operation’s log lines, its upstream requests and its errors', async () => {
    // The customer read fails for good: the answer carries an error, and the log a line per attempt.
    await emulatorAdmin(emulator.url)('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 500, times: 3 });
    const { header, body } = await post({ 'x-request-id': 'support-ticket-4711' });
    await emulatorAdmin(emulator.url)('DELETE', '/_emulator/faults');

    expect(header).toBe('support-ticket-4711');
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', requestId: 'support-ticket-4711' });

    const upstreamIds = proxy.requests.map((r) => r.headers['x-request-id']);
    expect(upstreamIds.length).toBe(4);
    expect(new Set(upstreamIds)).toEqual(new Set(['support-ticket-4711']));

    const mine = logs.lines().filter((line) => line.requestId === 'support-ticket-4711');
    const messages = mine.map((line) => line.msg);
    expect(messages.filter((m) => m === 'upstream call')).toHaveLength(4);
    expect(messages).toContain('operation finished');
    expect(mine.find((line) => line.msg === 'operation finished')).toMatchObject({ operation: 'TxWithCustomer', outcome: 'partial' });
    // The key never reaches a log line.
    expect(JSON.stringify(logs.lines())).not.toContain(key);
  });

  it('gives the lines logged where no context is at hand (the response-size cap) the request id too', async () => {
    const aliases = Array.from({ length: 25 }, (_, i) => `c${i}: currencies { id iso }`).join(' ');
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': 'too-large-1' },
      body: JSON.stringify({ query: `{ ${aliases} }` }),
    });
    expect(((await res.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).toMatchObject({ code: 'RESPONSE_TOO_LARGE', requestId: 'too-large-1' });
    const line = logs.lines().find((l) => String(l.msg).startsWith('answer over the response size limit'));
    expect(line).toMatchObject({ requestId: 'too-large-1' });
  });

  it('logs a masked internal error with the request id of the operation it came from', async () => {
    // An upstream client whose currency list fails with a plain Error: a fault of the gateway, not of the upstream.
    // Its own client: a gateway attaches its observer to the client it is given.
    const own = logSink();
    const base = createUpstreamClient({ baseUrl: proxy.url });
    const failing: UpstreamClient = {
      ...base,
      forKey: (apiKey, scope) => {
        // Each operation's bug names its own request id, so a line logged under another's id shows.
        if (scope?.requestId === 'context-fails') throw new Error('a bug while building context-fails');
        const api = base.forKey(apiKey, scope);
        return { ...api, currencies: { ...api.currencies, list: () => Promise.reject(new Error(`a bug in ${scope?.requestId}`)) } };
      },
    };
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: proxy.url, LOG_LEVEL: 'debug' });
    const buggy = await startGateway({ config, upstream: failing, logger: createLogger('debug', { destination: own }) });
    try {
      const send = (requestId: string) =>
        fetch(buggy.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': requestId },
          body: JSON.stringify({ query: '{ currencies { iso } }' }),
        }).then(async (res) => (await res.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] });
      // Two at once: each masked error is logged under its own operation's id.
      const answers = await Promise.all([send('masked-1'), send('masked-2')]);
      expect(answers.map((a) => a.errors[0]!.extensions)).toEqual([
        expect.objectContaining({ code: 'INTERNAL_SERVER_ERROR', requestId: 'masked-1' }),
        expect.objectContaining({ code: 'INTERNAL_SERVER_ERROR', requestId: 'masked-2' }),
      ]);
      // The caller reads that something failed, never what: the bug's own message stays in the log.
      expect(answers.map((a) => a.errors[0]!.message)).toEqual(['Internal server error.', 'Internal server error.']);
      const masked = () => own.lines().filter((l) => l.msg === 'internal error masked in a GraphQL response');
      expect(masked().map((l) => l.requestId).sort()).toEqual(['masked-1', 'masked-2']);
      for (const line of masked()) expect(line).toMatchObject({ err: { message: `a bug in ${String(line.requestId)}` } });
      // A failure while building the operation's context, before any resolver: Apollo reports it on its own path.
      const failed = await send('context-fails');
      expect(failed.errors[0]!).toMatchObject({ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
      expect(masked().find((l) => l.requestId === 'context-fails')).toMatchObject({ err: { message: 'a bug while building context-fails' } });
    } finally {
      await buggy.stop();
      base.close();
    }
  });

  it.each([
    { case: 'a malformed key', headers: { authorization: 'Bearer foo' }, body: '{"query":"{ currencies { iso } }"}', status: 401, code: 'UNAUTHENTICATED' },
    { case: 'a key of the other environment', headers: { authorization: 'Bearer sk_live_x' }, body: '{"query":"{ currencies { iso } }"}', status: 403, code: 'FORBIDDEN' },
    { case: 'a body that is not JSON', headers: { authorization: `Bearer ${key}` }, body: '{"query":', status: 400, code: 'BAD_REQUEST' },
    { case: 'a body over the limit without a key', headers: {}, body: JSON.stringify({ query: `{ __typename }`, pad: 'x'.repeat(20_000) }), status: 413, code: 'BAD_REQUEST' },
  ] as { case: string; headers: Record<string, string>; body: string; status: number; code: string }[])('gives a request refused before any parse ($case) its request id too', async ({ headers, body, status, code }) => {
    const requestId = `early-${code.toLowerCase()}-${status}`;
    const res = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...headers }, body });
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toBe(requestId);
    expect(((await res.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).toEqual({ code, requestId });
  });

  it('makes one up when none (or an unusable one) is given, and still sends it upstream', async () => {
    const { header, body } = await post({ 'x-request-id': 'has spaces\tand "quotes"' });
    expect(body.errors).toBeUndefined();
    expect(header).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(proxy.requests.map((r) => r.headers['x-request-id'])).toEqual([header, header]);
    expect(logs.lines().filter((line) => line.requestId === header && line.msg === 'upstream call')).toHaveLength(2);
  });

  it('takes the trace id of the caller’s traceparent, so logs and traces join', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const { header } = await post({ traceparent: `00-${traceId}-b7ad6b7169203331-01` });
    expect(header).toBe(traceId);
    expect(proxy.requests.every((r) => r.headers['x-request-id'] === traceId)).toBe(true);
  });

  it('gives each WebSocket operation an id of its own, in its errors and its upstream requests', async () => {
    const { client } = wsClient(gateway.url.replace(/^http/, 'ws'), key);
    try {
      const run = (id: string) =>
        new Promise<{ errors?: { extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
          let last: { errors?: { extensions?: Record<string, unknown> }[] } = {};
          client.subscribe({ query: 'query Tx($id: ID!) { transaction(id: $id) { id customer { email } } }', variables: { id } }, {
            next: (value) => (last = value as typeof last),
            error: reject,
            complete: () => resolve(last),
          });
        });
      // Objects no earlier test read, so no cache answers for the upstream.
      const make = factories(emulator, key);
      const fresh = [];
      for (let i = 0; i < 2; i++) fresh.push((await make.transaction({ customer: { id: (await make.customer()).id } })).id);
      await emulatorAdmin(emulator.url)('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 500, times: 6 });
      proxy.requests.length = 0;
      const first = await run(String(fresh[0]));
      const second = await run(String(fresh[1]));
      await emulatorAdmin(emulator.url)('DELETE', '/_emulator/faults');
      const ids = [first, second].map((r) => r.errors?.[0]?.extensions?.requestId);
      expect(ids[0]).toEqual(expect.any(String));
      expect(ids[1]).toEqual(expect.any(String));
      expect(ids[0]).not.toBe(ids[1]);
      // The connection's own account look-up belongs to no operation; every operation's call carries its id.
      const sent = new Set(proxy.requests.filter((r) => !r.path.startsWith('/v1/accounts')).map((r) => r.headers['x-request-id']));
      expect(sent).toEqual(new Set(ids));
      expect(logs.lines().some((line) => line.requestId === ids[0] && line.msg === 'operation finished')).toBe(true);
    } finally {
      await client.dispose();
    }
  });
});
