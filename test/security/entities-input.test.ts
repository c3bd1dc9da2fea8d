/**
 * `_entities` is the router's door into this subgraph, and anyone with a key can knock on it: a representation
 * the schema cannot resolve is the caller's mistake (BAD_USER_INPUT), never a logged server error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/harness.js';

const ENTITIES = 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Transaction { id } } }';

describe('_entities with representations the schema cannot resolve', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack?.stop());

  it.each([
    ['an unknown __typename', [{ __typename: 'Order', id: '1' }]],
    ['a type that is not an entity', [{ __typename: 'PageInfo', id: '1' }]],
    ['no __typename', [{ id: '1' }]],
    ['an object as id', [{ __typename: 'Transaction', id: { $gt: 1 } }]],
    ['a list as id', [{ __typename: 'Transaction', id: [1, 2] }]],
    ['a boolean as id', [{ __typename: 'Customer', id: true }]],
    ['no id', [{ __typename: 'Payout' }]],
  ])('%s is BAD_USER_INPUT', async (_name, representations) => {
    const result = await stack.gql(ENTITIES, { r: representations });
    const codes = (result.errors ?? []).map((e) => e.extensions?.code);
    expect(codes.length).toBeGreaterThan(0);
    expect(codes.every((code) => code === 'BAD_USER_INPUT'), JSON.stringify(result.errors)).toBe(true);
  });
});

describe('_entities representations written inline', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack?.stop());

  it.each([
    ['an unknown __typename', '{ __typename: "Order", id: "1" }'],
    ['an object as id', '{ __typename: "Transaction", id: { gt: 1 } }'],
    ['an object as iso', '{ __typename: "Currency", iso: { gt: 1 } }'],
    ['a variable-free list as id', '{ __typename: "Payout", id: ["1"] }'],
  ])('%s is BAD_USER_INPUT', async (_name, literal) => {
    const result = await stack.gql(`{ _entities(representations: [${literal}]) { __typename } }`);
    const codes = (result.errors ?? []).map((e) => e.extensions?.code);
    expect(codes.length).toBeGreaterThan(0);
    expect(codes.every((code) => code === 'BAD_USER_INPUT'), JSON.stringify(result.errors)).toBe(true);
  });

  it('a bad representation among good ones is named by its index', async () => {
    const result = await stack.gql(ENTITIES, { r: [{ __typename: 'Currency', iso: 'XOF' }, { __typename: 'Order', id: '1' }] });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(/representations\[1\]/);
  });
});
