import { readFileSync } from 'node:fs';
import { Kind, parse, type ObjectTypeDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories, type RestObject } from '../support/factories.js';
import { newKey, startStack, type Stack } from '../support/harness.js';

const ENTITY_KEYS = [
  ['Transaction', 'id'],
  ['Payout', 'id'],
  ['Customer', 'id'],
  ['Currency', 'id'],
  ['Currency', 'iso'],
  ['Webhook', 'id'],
  ['Event', 'id'],
  ['Log', 'id'],
] as const;

const ENTITIES_QUERY = `query ($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Transaction { id amount }
    ... on Payout { id amount }
    ... on Customer { id email }
    ... on Currency { id iso }
    ... on Webhook { id url }
    ... on Event { id type }
    ... on Log { id method }
  }
}`;

type Entity = Record<string, unknown> | null;

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, ...((await res.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[]; extensions?: Record<string, unknown> }) };
}

function typeDefinitions(sdl: string): Map<string, ObjectTypeDefinitionNode> {
  const types = new Map<string, ObjectTypeDefinitionNode>();
  for (const def of parse(sdl).definitions) if (def.kind === Kind.OBJECT_TYPE_DEFINITION) types.set(def.name.value, def);
  return types;
}

function keysOf(type: ObjectTypeDefinitionNode | undefined): string[] {
  return (type?.directives ?? [])
    .filter((d) => d.name.value === 'key')
    .map((d) => d.arguments?.find((a) => a.name.value === 'fields')?.value)
    .map((v) => (v?.kind === Kind.STRING ? v.value : ''));
}

describe('payments subgraph entities', () => {
  let stack: Stack;
  const key = newKey('entities');
  const auth = { authorization: `Bearer ${key}` };
  let customer: RestObject;
  let transaction: RestObject;
  let payout: RestObject;
  let webhook: RestObject;
  let xof: RestObject;
  let eventId: string;
  let logId: string;
  let sdl: string;

  beforeAll(async () => {
    stack = await startStack();
    const make = factories(stack.emulator, key);
    customer = await make.customer();
    transaction = await make.transaction({ amount: 4200, customer: { id: customer.id } });
    payout = await make.payout({ amount: 900, customer: { id: customer.id } });
    const hook = (await make.rest('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/entities', enabled: false })) as Record<string, unknown>;
    webhook = (hook['v1/webhook'] ?? hook) as RestObject;
    xof = (await make.currencies()).find((c) => c.iso === 'XOF')!;
    const lists = await stack.gql<{ events: { nodes: { id: string }[] }; logs: { nodes: { id: string }[] } }>(
      '{ events(first: 1) { nodes { id } } logs(first: 1) { nodes { id } } }', {}, key);
    eventId = lists.data!.events.nodes[0]!.id;
    logId = lists.data!.logs.nodes[0]!.id;
    const service = await post(stack.gateway.url, { query: '{ _service { sdl } }' });
    sdl = (service.data!._service as { sdl: string }).sdl;
  });
  afterAll(() => stack.stop());

  it.each(ENTITY_KEYS)('declares %s @key(fields: "%s") in _service { sdl }', (typeName, fields) => {
    expect(keysOf(typeDefinitions(sdl).get(typeName))).toContain(fields);
  });

  it('links the Federation 2 spec, shares Relay’s PageInfo and keeps its other value types under names of its own', () => {
    expect(sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+"/);
    const types = typeDefinitions(sdl);
    expect(types.get('PageInfo')?.directives?.map((d) => d.name.value)).toContain('shareable');
    const named = new Set(parse(sdl).definitions.flatMap((def) => ('name' in def && def.name ? [def.name.value] : [])));
    for (const name of ['UserError', 'UserErrorCode', 'PhoneNumber', 'Money']) {
      expect(named.has(name), name).toBe(false);
      expect(named.has(`Payments${name}`), `Payments${name}`).toBe(true);
    }
  });

  it('commits the SDL that _service { sdl } serves (supergraph/payments.graphql; run npm run sdl)', () => {
    const committed = readFileSync(new URL('../../supergraph/payments.graphql', import.meta.url), 'utf8');
    expect(committed.trimEnd()).toBe(sdl.trimEnd());
  });

  it('resolves every entity and key through _entities, and unknown ids to null', async () => {
    const cases: [Record<string, unknown>, Entity][] = [
      [{ __typename: 'Transaction', id: String(transaction.id) }, { __typename: 'Transaction', id: String(transaction.id), amount: 4200 }],
      [{ __typename: 'Payout', id: String(payout.id) }, { __typename: 'Payout', id: String(payout.id), amount: 900 }],
      [{ __typename: 'Customer', id: String(customer.id) }, { __typename: 'Customer', id: String(customer.id), email: customer.email }],
      [{ __typename: 'Currency', id: String(xof.id) }, { __typename: 'Currency', id: String(xof.id), iso: 'XOF' }],
      [{ __typename: 'Currency', iso: 'XOF' }, { __typename: 'Currency', id: String(xof.id), iso: 'XOF' }],
      [{ __typename: 'Webhook', id: String(webhook.id) }, { __typename: 'Webhook', id: String(webhook.id), url: 'http://127.0.0.1:9/entities' }],
      [{ __typename: 'Event', id: eventId }, { __typename: 'Event', id: eventId, type: expect.any(String) as unknown }],
      [{ __typename: 'Log', id: logId }, { __typename: 'Log', id: logId, method: expect.stringMatching(/GET|POST|PUT|DELETE/) as unknown }],
      ...['Transaction', 'Payout', 'Customer', 'Currency', 'Webhook', 'Event', 'Log'].map(
        (t): [Record<string, unknown>, Entity] => [{ __typename: t, id: '987654321' }, null],
      ),
      [{ __typename: 'Currency', iso: 'ZZZ' }, null],
    ];
    const res = await post(stack.gateway.url, { query: ENTITIES_QUERY, variables: { representations: cases.map(([r]) => r) } }, auth);
    expect(res.errors).toBeUndefined();
    expect(res.data!._entities).toEqual(cases.map(([, expected]) => expected));
  });

  it('reads each distinct id once for 100 representations in one _entities request', async () => {
    const batchKey = newKey('entities-batch');
    const make = factories(stack.emulator, batchKey);
    const owner = await make.customer();
    const txns: RestObject[] = [];
    for (let i = 0; i < 10; i++) txns.push(await make.transaction({ amount: 100 + i, customer: { id: owner.id } }));
    // Currencies belong to an account: this account's XOF has its own id.
    const ownXof = (await make.currencies()).find((c) => c.iso === 'XOF')!;
    const representations = Array.from({ length: 100 }, (_, i) =>
      i % 4 === 3
        ? { __typename: 'Currency', ...(i % 8 === 3 ? { iso: 'XOF' } : { id: String(ownXof.id) }) }
        : { __typename: 'Transaction', id: String(txns[i % 10]!.id) },
    );
    await stack.resetCounts();
    const res = await post(
      stack.gateway.url,
      { query: ENTITIES_QUERY, variables: { representations } },
      { authorization: `Bearer ${batchKey}` },
    );
    expect(res.errors).toBeUndefined();
    const entities = res.data!._entities as Entity[];
    expect(entities).toHaveLength(100);
    expect(entities.every((e) => e !== null)).toBe(true);
    expect(entities.filter((e) => e!.__typename === 'Transaction').map((e) => e!.id))
      .toEqual(representations.filter((r) => r.__typename === 'Transaction').map((r) => (r as { id: string }).id));
    expect(await stack.upstreamCalls('GET /v1/transactions/:id')).toBe(10);
    // The ISO key needs the list (beyond the spec); the id key reads by id, once, through the spec's endpoint.
    expect(await stack.upstreamCalls('GET /v1/currencies')).toBe(1);
    expect(await stack.upstreamCalls('GET /v1/currencies/:id')).toBe(1);
    expect(await stack.upstreamCalls()).toBe(12);
  });

  it('refuses _entities without the caller\'s Authorization, before any upstream read', async () => {
    await stack.resetCounts();
    const res = await post(stack.gateway.url, {
      query: ENTITIES_QUERY,
      variables: { representations: [{ __typename: 'Customer', id: String(customer.id) }] },
    });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await stack.upstreamCalls()).toBe(0);
  });

  it.each([
    ['returns', { 'apollo-federation-include-trace': 'ftv1' }, true],
    ['does not return', {}, false],
  ] as const)('%s a federated inline trace (ftv1) when the router asks for it', async (_, headers, traced) => {
    const res = await post(
      stack.gateway.url,
      { query: ENTITIES_QUERY, variables: { representations: [{ __typename: 'Customer', id: String(customer.id) }] } },
      { ...auth, ...headers },
    );
    expect(res.errors).toBeUndefined();
    expect((res.data!._entities as Entity[])[0]).toMatchObject({ id: String(customer.id) });
    if (traced) expect(res.extensions?.ftv1).toEqual(expect.stringMatching(/^[A-Za-z0-9+/=]{20,}$/));
    else expect(res.extensions?.ftv1).toBeUndefined();
  });
});
