/**
 * A scenario an operator would recognise (reads, a keyed mutation that is
 * retried then replayed, webhooks good and bad, a subscription, a burst over
 * the rate limit), then one scrape of /metrics: the counts add up, and no
 * label carries a key, an e-mail address or an id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { disposeLive, eventually, postWebhook, subscribeLive, transactionEvent, wsClient } from '../realtime/support.js';
import { parseMetrics, total, type Sample } from './support.js';

const SECRET = 'whsec_metrics_0123456789abcdef';
const PAGE = 'query PayoutPage { payouts(first: 10) { nodes { id customer { email } } } }';
const TX = 'query OneTransaction($id: ID!) { transaction(id: $id) { id customer { email } currency { iso } } }';
const CREATE = `mutation CreateCustomer($input: CreateCustomerInput!, $key: String) {
  createCustomer(input: $input, idempotencyKey: $key) { customer { id } userErrors { message } }
}`;

describe('/metrics after a scenario', () => {
  let stack: Stack;
  const key = newKey('metrics');
  const burstKey = newKey('burst');
  const secretsSeen: string[] = [key, burstKey, SECRET];
  const idsSeen: number[] = [];
  let samples: Sample[];
  let afterSubscription: Sample[];

  const scrape = async () => {
    const res = await fetch(stack.gateway.metricsUrl!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return parseMetrics(await res.text());
  };

  beforeAll(async () => {
    // Upstream reads are counted: every customer read goes upstream (no entity cache across requests).
    stack = await startStack({ env: { WEBHOOK_SECRETS: SECRET, RATE_LIMIT_PER_MINUTE: '10', ENTITY_CACHE: 'false' } });
    const make = factories(stack.emulator, key);
    const customers = [await make.customer(), await make.customer()];
    const payouts = [];
    for (let i = 0; i < 4; i++) payouts.push(await make.payout({ customer: { id: customers[i % 2]!.id } }));
    const tx = await make.transaction({ customer: { id: customers[0]!.id } });
    idsSeen.push(...customers.map((c) => c.id), ...payouts.map((p) => p.id), tx.id);
    secretsSeen.push(...customers.map((c) => String(c.email)));

    // Reads: a page whose four payouts share two customers (one batch of 2, two cache hits), then one transaction.
    expect((await stack.gql(PAGE, {}, key)).errors).toBeUndefined();
    expect((await stack.gql(TX, { id: String(tx.id) }, key)).errors).toBeUndefined();

    // A keyed mutation: the first attempt meets a 503 and is retried; then replayed; then its key reused.
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/customers', status: 503, times: 1 });
    const email = 'kofi.metrics@example.com';
    secretsSeen.push(email);
    const input = { firstname: 'Kofi', lastname: 'Metrics', email };
    const created = await stack.gql<{ createCustomer: { customer: { id: string } } }>(CREATE, { input, key: 'obs-key-1' }, key);
    expect(created.errors).toBeUndefined();
    idsSeen.push(Number(created.data!.createCustomer.customer.id));
    expect((await stack.gql(CREATE, { input, key: 'obs-key-1' }, key)).errors).toBeUndefined();
    const reused = await stack.gql(CREATE, { input: { ...input, lastname: 'Other' }, key: 'obs-key-1' }, key);
    expect(reused.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');

    // Webhooks: accepted, the same again, a wrong signature, a stale one.
    const event = transactionEvent({ accountId: 77, transaction: { id: 5001, status: 'approved', amount: 1000, updated_at: new Date().toISOString() } });
    idsSeen.push(5001);
    expect((await postWebhook(stack.gateway.port, event, { secret: SECRET })).status).toBe(200);
    expect((await postWebhook(stack.gateway.port, event, { secret: SECRET })).json).toMatchObject({ duplicate: true });
    expect((await postWebhook(stack.gateway.port, event, { secret: 'whsec_someone_else_000000' })).status).toBe(401);
    expect((await postWebhook(stack.gateway.port, event, { secret: SECRET, at: Math.floor(Date.now() / 1000) - 3600 })).status).toBe(401);

    // Eleven operations for a key allowed ten a minute. The first reads upstream, so the key is
    // proven and the rest spend its own budget only (an unproven key also spends its address's).
    await stack.gql('{ currencies { iso } }', {}, burstKey);
    for (let i = 0; i < 10; i++) await stack.gql('{ __typename }', {}, burstKey);

    // A subscription, live while scraped, then ended.
    const wsUrl = stack.gateway.url.replace(/^http/, 'ws');
    const { client } = wsClient(wsUrl, key);
    await subscribeLive(wsUrl, client, 'subscription Watch { transactionUpdated { id status } }');
    samples = await scrape();
    await disposeLive(wsUrl, client);
    afterSubscription = await eventually(scrape, (s) => total(s, 'gateway_operations_total', { type: 'subscription' }) === 1);
  }, 30_000);

  afterAll(() => stack.stop());

  it('counts operations by name, type and outcome, with their latency', () => {
    expect(total(samples, 'gateway_operations_total', { operation: 'PayoutPage', type: 'query', outcome: 'ok' })).toBe(1);
    expect(total(samples, 'gateway_operations_total', { operation: 'OneTransaction', type: 'query', outcome: 'ok' })).toBe(1);
    expect(total(samples, 'gateway_operations_total', { operation: 'CreateCustomer', type: 'mutation', outcome: 'ok' })).toBe(2);
    expect(total(samples, 'gateway_operations_total', { operation: 'CreateCustomer', type: 'mutation', outcome: 'error' })).toBe(1);
    expect(total(samples, 'gateway_operation_duration_seconds_count', { operation: 'PayoutPage', type: 'query' })).toBe(1);
    expect(total(samples, 'gateway_operation_errors_total', { code: 'IDEMPOTENCY_KEY_REUSED' })).toBe(1);
    // Ten anonymous operations ran; the eleventh was refused before execution.
    expect(total(samples, 'gateway_operations_total', { operation: 'anonymous', type: 'query', outcome: 'ok' })).toBe(10);
    expect(total(samples, 'gateway_operations_total', { operation: 'unknown', type: 'unknown', outcome: 'rejected' })).toBe(1);
    // Refused before any parse, yet counted by its code like any other error: a flood of bad keys or of 429s shows.
    expect(total(samples, 'gateway_operation_errors_total', { code: 'RATE_LIMITED' })).toBe(1);
    expect(total(afterSubscription, 'gateway_operations_total', { operation: 'Watch', type: 'subscription' })).toBe(1);
  });

  it('counts upstream attempts by route, method, status class and attempt, and the retry', () => {
    const post = { route: '/v1/customers', method: 'POST' };
    expect(total(samples, 'gateway_upstream_requests_total', { ...post, status_class: '5xx', attempt: '1' })).toBe(1);
    expect(total(samples, 'gateway_upstream_requests_total', { ...post, status_class: '2xx', attempt: '2' })).toBe(1);
    expect(total(samples, 'gateway_upstream_retries_total', post)).toBe(1);
    expect(total(samples, 'gateway_upstream_retry_budget_exhausted_total')).toBe(0);
    expect(total(samples, 'gateway_upstream_requests_total', { route: '/v1/customers/:id', method: 'GET', status_class: '2xx' })).toBe(3);
    expect(total(samples, 'gateway_upstream_request_duration_seconds_count', { route: '/v1/payouts/search', method: 'GET' })).toBe(1);
    expect(total(samples, 'gateway_upstream_breaker_state', { ...post, state: 'closed' })).toBe(1);
    expect(total(samples, 'gateway_upstream_breaker_state', { ...post, state: 'open' })).toBe(0);
    expect(samples.some((s) => s.name === 'gateway_upstream_bulkhead_queued' && s.labels.route === '/v1/customers/:id')).toBe(true);
  });

  it('counts DataLoader batches and cache hits, and idempotency outcomes', () => {
    // The page: four loads of two customers; the transaction: one more customer batch of one.
    expect(total(samples, 'gateway_dataloader_batch_size_sum', { loader: 'customer' })).toBe(3);
    expect(total(samples, 'gateway_dataloader_batch_size_count', { loader: 'customer' })).toBe(2);
    expect(total(samples, 'gateway_dataloader_cache_hits_total', { loader: 'customer' })).toBe(2);
    expect(total(samples, 'gateway_idempotency_requests_total', { outcome: 'executed' })).toBe(1);
    expect(total(samples, 'gateway_idempotency_requests_total', { outcome: 'replayed' })).toBe(1);
    expect(total(samples, 'gateway_idempotency_requests_total', { outcome: 'conflict' })).toBe(1);
  });

  it('counts webhooks by result, rate-limit refusals, and the live WebSocket side', () => {
    for (const result of ['accepted', 'duplicate', 'bad_signature', 'stale']) {
      expect(total(samples, 'gateway_webhooks_received_total', { result }), result).toBe(1);
    }
    expect(total(samples, 'gateway_rate_limited_total', { limit: 'operations' })).toBe(1);
    expect(total(samples, 'gateway_websocket_connections')).toBe(1);
    expect(total(samples, 'gateway_subscriptions_active')).toBe(1);
    expect(total(samples, 'gateway_subscriptions_started_total')).toBe(1);
    expect(total(afterSubscription, 'gateway_subscriptions_active')).toBe(0);
  });

  it('exposes the default Node process metrics', () => {
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('carries no key, e-mail address or id in any label', () => {
    const values = [...samples, ...afterSubscription].flatMap((s) =>
      Object.entries(s.labels)
        .filter(([name]) => name !== 'le')
        .map(([name, value]) => ({ metric: s.name, name, value })),
    );
    expect(values.length).toBeGreaterThan(100);
    for (const { metric, name, value } of values) {
      const where = `${metric}{${name}="${value}"}`;
      expect(value, where).not.toMatch(/@|sk_|whsec_/);
      for (const secret of secretsSeen) expect(value, where).not.toContain(secret);
      // A path is a template: no numeric segment.
      expect(value, where).not.toMatch(/\/\d+(\/|$)/);
      // The attempt number is the one numeric label: 1 to UPSTREAM_MAX_ATTEMPTS (at most 10).
      if (name === 'attempt') expect(value, where).toMatch(/^([1-9]|10)$/);
      // (Node's own metrics carry version numbers; the gateway's carry no number but the attempt.)
      else if (metric.startsWith('gateway_')) for (const id of idsSeen) expect(value === String(id), where).toBe(false);
      if (name === 'route') expect(value, where).toMatch(/^\/v1(\/[a-z_]+|\/:[a-zA-Z]+)*$/);
    }
  });
});

describe('/metrics on a port of its own', () => {
  it('serves METRICS_PORT alone and leaves the main port without it', async () => {
    const stack = await startStack({ env: { METRICS_PORT: '0' } });
    try {
      const metricsUrl = stack.gateway.metricsUrl!;
      expect(new URL(metricsUrl).port).not.toBe(String(stack.gateway.port));
      expect((await fetch(metricsUrl)).status).toBe(200);
      expect((await fetch(new URL('/metrics', stack.gateway.url))).status).toBe(404);
    } finally {
      await stack.stop();
    }
  });

  it('is absent with METRICS_ENABLED=false', async () => {
    const stack = await startStack({ env: { METRICS_ENABLED: 'false' } });
    try {
      expect(stack.gateway.metricsUrl).toBeNull();
      expect((await fetch(new URL('/metrics', stack.gateway.url))).status).toBe(404);
    } finally {
      await stack.stop();
    }
  });
});

describe('operation-name labels per caller', () => {
  it('one key sending 300 distinct names takes only its share: another key\'s new name still gets its label', async () => {
    const stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const flooder = newKey('labels');
      const honest = newKey('honest');
      // Both keys proven by the upstream first: only such keys own operation names.
      for (const key of [flooder, honest]) expect((await stack.gql('{ currencies { iso } }', {}, key)).errors).toBeUndefined();
      const letters = (i: number) => `${String.fromCharCode(97 + (i % 26))}${'x'.repeat(Math.floor(i / 26))}`;
      for (let i = 0; i < 300; i++) expect((await stack.gql(`query Flood${letters(i)} { __typename }`, {}, flooder)).status).toBe(200);
      expect((await stack.gql('query HonestDashboard { __typename }', {}, honest)).status).toBe(200);

      const samples = parseMetrics(await (await fetch(stack.gateway.metricsUrl!)).text());
      const flooded = new Set(samples.filter((s) => s.name === 'gateway_operations_total').map((s) => s.labels.operation).filter((o) => o?.startsWith('Flood')));
      expect(flooded.size).toBe(20);
      expect(total(samples, 'gateway_operations_total', { operation: 'other' })).toBe(280);
      expect(total(samples, 'gateway_operations_total', { operation: 'HonestDashboard' })).toBe(1);
    } finally {
      await stack.stop();
    }
  }, 30_000);

  it('made-up keys share one allowance, whatever their number: a proven key\'s new name still gets its label', async () => {
    const stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const honest = newKey('honest');
      expect((await stack.gql('{ currencies { iso } }', {}, honest)).errors).toBeUndefined();
      const letters = (i: number) => `${String.fromCharCode(97 + (i % 26))}${'x'.repeat(Math.floor(i / 26))}`;
      // Each name from a fresh key the upstream never saw: `__typename` makes no upstream call.
      for (let i = 0; i < 300; i++) expect((await stack.gql(`query Minted${letters(i)} { __typename }`, {}, newKey(`minted${i}`))).status).toBe(200);
      expect((await stack.gql('query HonestDashboard { __typename }', {}, honest)).status).toBe(200);

      const samples = parseMetrics(await (await fetch(stack.gateway.metricsUrl!)).text());
      const minted = new Set(samples.filter((s) => s.name === 'gateway_operations_total').map((s) => s.labels.operation).filter((o) => o?.startsWith('Minted')));
      expect(minted.size).toBe(20);
      expect(total(samples, 'gateway_operations_total', { operation: 'HonestDashboard' })).toBe(1);
    } finally {
      await stack.stop();
    }
  }, 30_000);
});
