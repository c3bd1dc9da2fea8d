/**
 * An upstream value no scalar can represent fails its own field as UPSTREAM_ERROR under graphql-jit
 * as under graphql-js, however many such values an answer holds: the errors a compiled query's
 * serializers throw are kept for the execution that threw them, none dropped before it reads them back.
 * Two gateways (graphql-jit, and GRAPHQL_JIT=false) over scripted upstreams sending the same page.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.js';
import { jit } from '../support/jit-spy.js';
import { aCurrency, aCustomer, aTransaction, enveloped } from '../upstream/fixtures.js';
import type { ReceivedRequest, Reply } from '../upstream/fake-upstream.js';

vi.mock('graphql-jit', (real) => import('../support/jit-spy.js').then((spy) => spy.spiedGraphqlJit(real)));

const BAD_EMAIL = 'not-an-email';
// Ten values per transaction no scalar can represent (eight dates, two URLs), and its customer's email.
const bad = { created_at: 'soon', updated_at: 'soon', approved_at: 'soon', canceled_at: 'soon', declined_at: 'soon', refunded_at: 'soon', transferred_at: 'soon', deleted_at: 'soon', callback_url: 'not a url', receipt_url: 'not a url' };
const PAGE = `{ transactions(first: 100) { nodes { id createdAt updatedAt approvedAt canceledAt declinedAt refundedAt transferredAt deletedAt callbackUrl receiptUrl customer { email } } } }`;

function reply(req: ReceivedRequest): Reply {
  if (req.path.startsWith('/v1/currencies')) return { json: [aCurrency()] };
  if (req.path.startsWith('/v1/customers')) return { json: enveloped('customer', aCustomer({ email: BAD_EMAIL })) };
  const page = Array.from({ length: 100 }, (_, i) => aTransaction({ id: i + 1, ...bad, customer: { klass: 'v1/customer', id: 7, email: BAD_EMAIL } }));
  return { json: enveloped('transactions', page, { meta: { current_page: 1, next_page: null, per_page: 100, total_count: 100, total_pages: 1 } }) };
}

describe('graphql-jit with more than a thousand unrepresentable values in one answer', () => {
  let compiled: ScriptedGateway;
  let interpreted: ScriptedGateway;

  beforeAll(async () => {
    const env = { RATE_LIMIT_PER_MINUTE: '0', ENTITY_CACHE: 'false' };
    compiled = await startScriptedGateway(env);
    interpreted = await startScriptedGateway({ ...env, GRAPHQL_JIT: 'false' });
    compiled.upstream.replyWith(reply);
    interpreted.upstream.replyWith(reply);
  });
  afterAll(async () => {
    await compiled?.stop();
    await interpreted?.stop();
  });

  const send = async (side: ScriptedGateway) => {
    const res = await fetch(side.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk_sandbox_jit_serializers' },
      body: JSON.stringify({ query: PAGE }),
    });
    return { status: res.status, text: (await res.text()).replace(/"requestId":"[0-9a-f-]{36}"/g, '"requestId":"…"') };
  };

  it('reports each as UPSTREAM_ERROR at its own field, the same bytes as graphql-js', async () => {
    const runs = jit.runs;
    const fromJit = await send(compiled);
    expect(jit.runs).toBe(runs + 1);
    const errors = JSON.parse(fromJit.text).errors as { path: (string | number)[]; extensions: { code: string } }[];
    expect(errors.length).toBeGreaterThan(1_000);
    const codes = new Map<string, number>();
    for (const error of errors) codes.set(error.extensions.code, (codes.get(error.extensions.code) ?? 0) + 1);
    expect(Object.fromEntries(codes)).toEqual({ UPSTREAM_ERROR: errors.length });
    expect(errors[0]!.path).toEqual(['transactions', 'nodes', 0, 'createdAt']);
    expect(fromJit).toEqual(await send(interpreted));
  });
});
