/** `@skip` / `@include` as the gateway's own selection checks see them (auth gate, id-only relations, idempotency). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

describe('directives in the gateway\'s selection checks', () => {
  let stack: Stack;
  const key = newKey('directives');

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('the auth gate lets an anonymous operation through when the private field is skipped, and refuses it when included', async () => {
    const query = 'query ($s: Boolean!) { __typename currencies @skip(if: $s) { iso } }';
    const skipped = await stack.gql(query, { s: true }, null);
    expect(skipped.errors).toBeUndefined();
    expect(skipped.data).toEqual({ __typename: 'Query' });
    const included = await stack.gql(query, { s: false }, null);
    expect(included.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('a relation whose only other field is skipped is answered from the foreign key, with no customer read', async () => {
    const f = factories(stack.emulator, key);
    const customer = await f.customer();
    const t = await f.transaction({ customer: { id: customer.id } });
    await stack.resetCounts();
    const res = await stack.gql<{ transaction: { customer: { id: string } } }>(
      'query ($id: ID!, $more: Boolean!) { transaction(id: $id) { customer { id email @include(if: $more) } } }',
      { id: String(t.id), more: false },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.transaction.customer.id).toBe(String(t.customer_id));
    expect(await stack.upstreamCalls('GET /v1/customers/:id')).toBe(0);
  });

  it('the Idempotency-Key header counts only the mutation fields that run', async () => {
    const res = await fetch(stack.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': `directives-${Date.now()}` },
      body: JSON.stringify({
        query: `mutation { a: createCustomer(input: { firstname: "A", lastname: "B", email: "ab@example.com" }) { customer { id } }
                           b: createCustomer(input: { firstname: "C", lastname: "D", email: "cd@example.com" }) @skip(if: true) { customer { id } } }`,
      }),
    });
    const body = (await res.json()) as { data?: { a: { customer: { id: string } } }; errors?: unknown[] };
    expect(body.errors).toBeUndefined();
    expect(body.data!.a.customer.id).toBeTruthy();
  });
});
