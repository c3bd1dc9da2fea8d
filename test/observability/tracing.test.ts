/**
 * Traces end to end: a caller (the router) sends `traceparent`, the gateway
 * exports OTLP/HTTP JSON to an in-process receiver, and a recording proxy in
 * front of the emulator shows what the upstream received.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, type RunningGateway } from '../../src/server/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { factories } from '../support/factories.js';
import { emulatorAdmin, newKey } from '../support/harness.js';
import { logSink, startOtlpReceiver, startRecordingProxy, type OtlpReceiver, type OtlpSpan, type RecordingProxy } from './support.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;

interface Setup {
  emulator: RunningEmulator;
  proxy: RecordingProxy;
  upstream: UpstreamClient;
  gateway: RunningGateway;
  key: string;
  txId: number;
}

let setup: Setup | null = null;
let receiver: OtlpReceiver | null = null;

async function start(env: Record<string, string>): Promise<Setup> {
  const emulator = await startEmulator({ port: 0, settleMs: 50 });
  const key = newKey('trace');
  const make = factories(emulator, key);
  const tx = await make.transaction({ customer: { id: (await make.customer()).id } });
  const proxy = await startRecordingProxy(emulator.url);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: proxy.url, LOG_LEVEL: 'silent', ...env });
  const upstream = createUpstreamClient({ baseUrl: proxy.url, timeoutMs: config.upstreamTimeoutMs, resilience: config.upstreamResilience });
  const gateway = await startGateway({ config, upstream, logger: createLogger('silent') });
  setup = { emulator, proxy, upstream, gateway, key, txId: tx.id };
  return setup;
}

/** Stops the gateway, which exports the spans it still holds. */
async function stop(): Promise<void> {
  if (!setup) return;
  await setup.gateway.stop();
  setup.upstream.close();
  await setup.proxy.close();
  await setup.emulator.stop();
  setup = null;
}

afterEach(async () => {
  await stop();
  await receiver?.close();
  receiver = null;
});

const TX_WITH_CUSTOMER = 'query TxWithCustomer($id: ID!) { transaction(id: $id) { id customer { email } } }';

async function query(s: Setup, headers: Record<string, string>, document = TX_WITH_CUSTOMER) {
  const res = await fetch(s.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}`, ...headers },
    body: JSON.stringify({ query: document, variables: document === TX_WITH_CUSTOMER ? { id: String(s.txId) } : {} }),
  });
  return (await res.json()) as { data?: unknown; errors?: unknown[] };
}

describe('OpenTelemetry traces', () => {
  it('puts each upstream call under the loader batch that made it, the batch under the operation, the operation under the caller’s traceparent, and propagates it upstream', async () => {
    receiver = await startOtlpReceiver();
    const s = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gateway-under-test' });
    // The customer read fails once and is retried: two attempts, two spans.
    await emulatorAdmin(s.emulator.url)('POST', '/_emulator/faults', { route: 'GET /v1/customers/:id', status: 500, times: 1 });

    const answer = await query(s, { traceparent: TRACEPARENT });
    expect(answer.errors).toBeUndefined();
    const upstreamSeen = [...s.proxy.requests];
    await stop();

    const spans = receiver.spans.filter((span) => span.traceId === CALLER_TRACE);
    const operation = spans.find((span) => span.kind === SERVER);
    expect(operation).toMatchObject({
      name: 'query TxWithCustomer',
      parentSpanId: CALLER_SPAN,
      attributes: { 'graphql.operation.name': 'TxWithCustomer', 'graphql.operation.type': 'query' },
    });
    const calls = spans.filter((span) => span.kind === CLIENT);
    expect(calls.map((c) => c.name).sort()).toEqual(['GET /v1/customers/:id', 'GET /v1/customers/:id', 'GET /v1/transactions/:id']);
    // Both reads go through DataLoaders: each call's parent is its batch's span, a child of the
    // operation. The resolvers that only asked a loader (Query.transaction, Transaction.customer)
    // have no span of their own.
    const internal = spans.filter((span) => span.kind === INTERNAL);
    expect(internal.map((span) => span.name).sort()).toEqual(['DataLoader customer', 'DataLoader transaction']);
    for (const batch of internal) {
      expect(batch.parentSpanId).toBe(operation!.spanId);
      expect(batch.attributes['gateway.loader.keys']).toBe(1);
    }
    const batchOf = (call: OtlpSpan) => internal.find((span) => span.spanId === call.parentSpanId)?.name;
    expect(calls.map((call) => `${batchOf(call)} > ${call.name}`).sort()).toEqual([
      'DataLoader customer > GET /v1/customers/:id',
      'DataLoader customer > GET /v1/customers/:id',
      'DataLoader transaction > GET /v1/transactions/:id',
    ]);
    const customerCalls = calls.filter((c) => c.name === 'GET /v1/customers/:id');
    expect(customerCalls.map((c) => c.attributes['http.response.status_code']).sort()).toEqual([200, 500]);
    expect(customerCalls.find((c) => c.attributes['http.response.status_code'] === 200)!.attributes['http.request.resend_count']).toBe(1);
    expect(receiver.services).toContain('gateway-under-test');

    // Each upstream request carried the trace, with its own call span as the parent.
    expect(upstreamSeen).toHaveLength(3);
    const callIds = new Set(calls.map((c) => c.spanId));
    for (const request of upstreamSeen) {
      const [, trace, parent] = String(request.headers.traceparent).split('-');
      expect(trace).toBe(CALLER_TRACE);
      expect(callIds.has(parent!)).toBe(true);
    }
    // No span says which key called.
    expect(JSON.stringify(receiver.spans)).not.toContain(s.key);
  });

  it('gives a root field that calls the upstream itself a span, parent of its calls; its relations go under their batches', async () => {
    receiver = await startOtlpReceiver();
    const s = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ENTITY_CACHE: 'false' });
    const answer = await query(s, {}, 'query Recent { transactions(first: 2) { nodes { id currency { iso } } } }');
    expect(answer.errors).toBeUndefined();
    await stop();

    const operation = receiver.spans.find((span) => span.kind === SERVER)!;
    const spans = receiver.spans.filter((span) => span.traceId === operation.traceId);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const field = spans.find((span) => span.name === 'resolve Query.transactions');
    expect(field).toMatchObject({ kind: INTERNAL, parentSpanId: operation.spanId, attributes: { 'graphql.field.coordinate': 'Query.transactions' } });
    // Each call under an INTERNAL span of this operation, never directly under the operation.
    const calls = spans.filter((span) => span.kind === CLIENT);
    expect(calls.map((call) => `${byId.get(call.parentSpanId!)?.name} > ${call.name}`).sort()).toEqual([
      'DataLoader currencyById > GET /v1/currencies/:id',
      'resolve Query.transactions > GET /v1/transactions',
    ]);
    for (const call of calls) expect(byId.get(call.parentSpanId!)!.parentSpanId).toBe(operation.spanId);
    expect(spans.filter((span) => span.name.startsWith('resolve ')).map((span) => span.name)).toEqual(['resolve Query.transactions']);
  });

  it('gives a mutation its field span, and keeps concurrent operations in their own traces', async () => {
    receiver = await startOtlpReceiver();
    const s = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ENTITY_CACHE: 'false' });
    const traces = ['a', 'b', 'c'].map((c) => c.repeat(32));
    const answers = await Promise.all([
      ...traces.map((trace) => query(s, { traceparent: `00-${trace}-${CALLER_SPAN}-01` })),
      query(s, { traceparent: `00-${'d'.repeat(32)}-${CALLER_SPAN}-01` }, 'mutation { createCustomer(input: { firstname: "Ama", lastname: "Mensah", email: "ama@example.com" }) { customer { id } } }'),
    ]);
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    await stop();

    for (const trace of traces) {
      const spans = receiver.spans.filter((span) => span.traceId === trace);
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const calls = spans.filter((span) => span.kind === CLIENT);
      expect(calls.map((call) => `${byId.get(call.parentSpanId!)?.name} > ${call.name}`).sort(), trace).toEqual([
        'DataLoader customer > GET /v1/customers/:id',
        'DataLoader transaction > GET /v1/transactions/:id',
      ]);
    }
    const mutation = receiver.spans.filter((span) => span.traceId === 'd'.repeat(32));
    const field = mutation.find((span) => span.name === 'resolve Mutation.createCustomer')!;
    expect(field.kind).toBe(INTERNAL);
    expect(mutation.filter((span) => span.kind === CLIENT && span.parentSpanId === field.spanId).map((span) => span.name)).toEqual(['POST /v1/customers']);
  });

  it('makes no batch span for what the entity cache answers', async () => {
    receiver = await startOtlpReceiver();
    const s = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const cold = 'e'.repeat(32);
    const warm = 'f'.repeat(32);
    expect((await query(s, { traceparent: `00-${cold}-${CALLER_SPAN}-01` })).errors).toBeUndefined();
    expect((await query(s, { traceparent: `00-${warm}-${CALLER_SPAN}-01` })).errors).toBeUndefined();
    await stop();

    const batches = (trace: string) => receiver!.spans.filter((span) => span.traceId === trace && span.kind === INTERNAL).map((span) => span.name).sort();
    expect(batches(cold)).toEqual(['DataLoader customer', 'DataLoader transaction']);
    // The customer is cached for its TTL; the transaction is pending, so it is read again.
    expect(batches(warm)).toEqual(['DataLoader transaction']);
  });

  it('starts a trace of its own when the caller sends none', async () => {
    receiver = await startOtlpReceiver();
    const s = await start({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces` });
    expect((await query(s, {})).errors).toBeUndefined();
    await stop();
    const operation = receiver.spans.find((span) => span.kind === SERVER)!;
    expect(operation.parentSpanId ?? '').toBe('');
    expect(receiver.spans.filter((span) => span.kind === CLIENT && span.traceId === operation.traceId)).toHaveLength(2);
  });

  it('says so in the log when the collector cannot be reached', async () => {
    const logs = logSink();
    const emulator = await startEmulator({ port: 0, settleMs: 50 });
    // A port nothing listens on: the export fails.
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: emulator.url, LOG_LEVEL: 'warn', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    const upstream = createUpstreamClient({ baseUrl: emulator.url });
    const gateway = await startGateway({ config, upstream, logger: createLogger('warn', { destination: logs }) });
    try {
      await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    } finally {
      await gateway.stop();
      upstream.close();
      await emulator.stop();
    }
    expect(logs.lines().some((line) => line.level === 40 && String(line.msg).startsWith('OpenTelemetry:'))).toBe(true);
  });

  it('passes the caller’s traceparent upstream unchanged when tracing is off', async () => {
    const s = await start({});
    expect((await query(s, { traceparent: TRACEPARENT })).errors).toBeUndefined();
    expect(s.proxy.requests).toHaveLength(2);
    for (const request of s.proxy.requests) expect(request.headers.traceparent).toBe(TRACEPARENT);
  });
});
