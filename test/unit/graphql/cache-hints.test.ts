/**
 * A document's cache hint (cache-hints.ts) over a small schema: the smallest
 * TTL of the types it reads, nothing for a type without one or a mutation,
 * weightless types inheriting their parent's, and the status keys an answer
 * must show final; then `finalAnswer` over answers.
 */
import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createCacheHints, finalAnswer, type CacheHintRules } from '../../../src/graphql/cache-hints.js';

const schema = buildSchema(`
  directive @cost(weight: Int!) on OBJECT
  type Query {
    ok: Boolean
    transaction(id: ID!): Transaction
    payout(id: ID!): Payout
    customer(id: ID!): Customer
    currencies: [Currency!]!
    webhooks: [Webhook!]!
    node: Node
    _entities(representations: [String!]!): [_Entity]!
  }
  type Mutation { touch: Customer currencies: [Currency!]! }
  type Subscription { ticks: Customer }
  interface Node { id: ID! }
  union _Entity = Transaction | Customer
  type Transaction implements Node { id: ID! status: String amount: Money customer: Customer currency: Currency }
  type Payout implements Node { id: ID! status: String }
  type Customer implements Node { id: ID! email: String }
  type Currency { iso: String }
  type Webhook { id: ID! }
  type Money @cost(weight: 0) { amount: String currency: Currency }
  type Weighed @cost(weight: 1) { x: Int }
`);

const FINAL_TX = (s: string) => s === 'canceled' || s === 'approved';
const FINAL_PAYOUT = (s: string) => s === 'sent';
const RULES: CacheHintRules = {
  maxAge: { Transaction: 3600, Payout: 3600, Customer: 30, Currency: 120, Webhook: 0, Node: 999 },
  finalWhen: { Transaction: FINAL_TX, Payout: FINAL_PAYOUT },
};
const hints = createCacheHints(schema, RULES);
const hintOf = (source: string, operationName?: string) => hints(parse(source), operationName);
const checks = (source: string, operationName?: string) => [...hintOf(source, operationName).statusChecks.keys()];

describe('createCacheHints', () => {
  it('keeps a type for its TTL, and an answer for the smallest TTL it reads', () => {
    expect(hintOf('{ currencies { iso } }').maxAge).toBe(120);
    expect(hintOf('{ customer(id: 1) { id email } }').maxAge).toBe(30);
    expect(hintOf('{ customer(id: 1) { __typename id } }').maxAge).toBe(30);
    expect(hintOf('{ currencies { iso } customer(id: 1) { id } }').maxAge).toBe(30);
    expect(hintOf('{ transaction(id: 1) { status currency { iso } } }').maxAge).toBe(120);
  });

  it('keeps nothing of a type with no TTL or a TTL of 0 or below, wherever it is read', () => {
    expect(hintOf('{ webhooks { id } }')).toMatchObject({ maxAge: 0 });
    expect(createCacheHints(schema, { ...RULES, maxAge: { Currency: -5 } })(parse('{ currencies { iso } }'), undefined).maxAge).toBe(0);
    expect(hintOf('{ currencies { iso } webhooks { id } }')).toMatchObject({ maxAge: 0 });
  });

  it('keeps nothing of an answer that reads no object', () => {
    expect(hintOf('{ ok }')).toMatchObject({ maxAge: 0 });
    expect(hintOf('{ __typename }')).toMatchObject({ maxAge: 0 });
  });

  it('keeps nothing of a mutation or subscription', () => {
    expect(hintOf('mutation { touch { id } }')).toMatchObject({ maxAge: 0 });
    // A mutation's field of the same name as a query's is still a mutation's.
    expect(hintOf('mutation { currencies { iso } }')).toMatchObject({ maxAge: 0 });
    expect(hintOf('subscription { ticks { id } }')).toMatchObject({ maxAge: 0 });
  });

  it('picks the operation by name, and keeps nothing when the name matches none or no name picks one', () => {
    const doc = 'query A { currencies { iso } } query B { customer(id: 1) { id } }';
    expect(hintOf(doc, 'A').maxAge).toBe(120);
    expect(hintOf(doc, 'B').maxAge).toBe(30);
    expect(hintOf(doc, 'C').maxAge).toBe(0);
    expect(hintOf(doc).maxAge).toBe(0);
    expect(hintOf('query A { currencies { iso } }').maxAge).toBe(120);
  });

  it('remembers the hint per document and operation name', () => {
    const doc = parse('query A { currencies { iso } } query B { customer(id: 1) { id } }');
    const a = hints(doc, 'A');
    expect(hints(doc, 'A')).toBe(a);
    expect(hints(doc, 'B')).not.toBe(a);
    expect(hints(doc, 'B').maxAge).toBe(30);
    const single = parse('{ currencies { iso } }');
    expect(hints(single, undefined)).toBe(hints(single, undefined));
  });

  it('lets a type of weight 0 inherit its parent, and a weighed type without a TTL refuse', () => {
    expect(hintOf('{ transaction(id: 1) { status amount { amount } } }').maxAge).toBe(3600);
    expect(hintOf('{ transaction(id: 1) { status amount { currency { iso } } } }').maxAge).toBe(120);
    const weighed = createCacheHints(buildSchema('directive @cost(weight: Int!) on OBJECT type Query { w: Weighed } type Weighed @cost(weight: 1) { x: Int }'), RULES);
    expect(weighed(parse('{ w { x } }'), undefined).maxAge).toBe(0);
    const weightless = createCacheHints(buildSchema('directive @cost(weight: Int!) on OBJECT type Query { w: Free } type Free @cost(weight: 0) { x: Int }'), RULES);
    // A weightless type alone reads no TTL at all: nothing is kept.
    expect(weightless(parse('{ w { x } }'), undefined).maxAge).toBe(0);
    // Only @cost's weight argument makes a type weightless: another directive's, or another argument, does not.
    const otherDirective = createCacheHints(
      buildSchema('directive @cost(weight: Int!, other: Int) on OBJECT directive @tag(weight: Int!) on OBJECT type Query { c: Customer } type Customer { t: T u: U } type T @tag(weight: 0) { x: Int } type U @cost(other: 0, weight: 1) { x: Int }'),
      RULES,
    );
    expect(otherDirective(parse('{ c { t { x } } }'), undefined).maxAge).toBe(0);
    expect(otherDirective(parse('{ c { u { x } } }'), undefined).maxAge).toBe(0);
    expect(otherDirective(parse('{ c { __typename } }'), undefined).maxAge).toBe(30);
  });

  it('wants the status of a type kept only when final, and registers its response key', () => {
    expect(hintOf('{ transaction(id: 1) { id } }')).toMatchObject({ maxAge: 0 });
    expect(hintOf('{ transaction(id: 1) { id status } }').maxAge).toBe(3600);
    expect(checks('{ transaction(id: 1) { id status } }')).toEqual(['status']);
    expect(checks('{ transaction(id: 1) { state: status } }')).toEqual(['state']);
    expect(hintOf('{ transaction(id: 1) { state: status } }').statusChecks.get('state')).toBe(FINAL_TX);
    // A status that may not be there is no proof either way.
    expect(hintOf('query ($s: Boolean!) { transaction(id: 1) { id status @include(if: $s) } }')).toMatchObject({ maxAge: 0 });
    expect(hintOf('{ transaction(id: 1) { id ... on Transaction { status } } }')).toMatchObject({ maxAge: 0 });
    expect(checks('{ customer(id: 1) { id } }')).toEqual([]);
  });

  it('holds a status key shared by two types to both tests', () => {
    const hint = hintOf('{ transaction(id: 1) { status } payout(id: 2) { status } }');
    const isFinal = hint.statusChecks.get('status')!;
    expect(isFinal('canceled')).toBe(false); // final for a transaction, not for a payout
    expect(isFinal('sent')).toBe(false);
    const same = hintOf('{ a: transaction(id: 1) { status } b: transaction(id: 2) { status } }');
    expect(same.statusChecks.get('status')).toBe(FINAL_TX);
    const both = createCacheHints(schema, { ...RULES, finalWhen: { Transaction: FINAL_TX, Payout: (s) => s === 'canceled' || s === 'sent' } });
    expect(both(parse('{ transaction(id: 1) { status } payout(id: 2) { status } }'), undefined).statusChecks.get('status')!('canceled')).toBe(true);
  });

  it('follows fragments, named and inline, with or without a type condition', () => {
    expect(hintOf('{ customer(id: 1) { ...C } } fragment C on Customer { id }').maxAge).toBe(30);
    expect(hintOf('{ transaction(id: 1) { status ...T } } fragment T on Transaction { customer { id } }').maxAge).toBe(30);
    // The status must be selected on the object itself, not in a fragment of it.
    expect(hintOf('{ transaction(id: 1) { ...T } } fragment T on Transaction { status customer { id } }').maxAge).toBe(0);
    expect(hintOf('{ transaction(id: 1) { ... { status } } }')).toMatchObject({ maxAge: 0 }); // status under a fragment: not unconditional
    expect(hintOf('{ customer(id: 1) { ... { email } } }').maxAge).toBe(30);
    expect(hintOf('{ currencies { iso } ... { webhooks { id } } }').maxAge).toBe(0);
    expect(hintOf('{ customer(id: 1) { ...Missing } }').maxAge).toBe(30);
  });

  it('reads the concrete type of each fragment under a union or interface', () => {
    expect(hintOf('{ _entities(representations: ["a"]) { ... on Customer { id } } }').maxAge).toBe(30);
    expect(hintOf('{ _entities(representations: ["a"]) { ... on Transaction { id status } ... on Customer { id } } }').maxAge).toBe(30);
    expect(checks('{ _entities(representations: ["a"]) { ... on Transaction { id status } } }')).toEqual(['status']);
    expect(hintOf('{ _entities(representations: ["a"]) { ... on Transaction { id } } }').maxAge).toBe(0);
    expect(hintOf('{ node { ... on Customer { email } } }').maxAge).toBe(30);
    // A field on the interface itself is not a concrete type's: nothing is known of it.
    expect(hintOf('{ node { id } }').maxAge).toBe(0);
    expect(hintOf('{ _entities(representations: ["a"]) { __typename } }').maxAge).toBe(0);
  });

  it('names each root field\'s response key, through fragments on the query too, and no nested one', () => {
    expect([...hintOf('{ c: customer(id: 1) { id } currencies { iso } }').roots]).toEqual(['c', 'currencies']);
    expect([...hintOf('{ ... on Query { customer(id: 1) { id } } }').roots]).toEqual(['customer']);
    expect([...hintOf('{ _entities(representations: ["a"]) { ... on Customer { id } } }').roots]).toEqual(['_entities']);
    expect([...hintOf('{ transaction(id: 1) { status customer { id } } }').roots]).toEqual(['transaction']);
  });

  it('keeps nothing of an introspection read or a field the schema lacks', () => {
    expect(hintOf('{ currencies { iso } __schema { queryType { name } } }').maxAge).toBe(0);
    expect(hintOf('{ currencies { iso } nope { id } }').maxAge).toBe(0);
    expect(hintOf('{ nope { id } currencies { iso } }').maxAge).toBe(0);
  });
});

describe('createCacheHints: the keys that hold a final type', () => {
  const holders = (source: string) => [...hintOf(source).holders];

  it('names the response key of each field that reads a type kept only when final, aliased or not', () => {
    expect(holders('{ transaction(id: 1) { status } }')).toEqual(['transaction']);
    expect(holders('{ t: transaction(id: 1) { status } p: payout(id: 2) { status } }')).toEqual(['t', 'p']);
    expect(holders('{ t: transaction(id: 1) { status } transaction(id: 2) { status } }')).toEqual(['t', 'transaction']);
  });

  it('names no field of a type kept for its TTL, under a final one or not', () => {
    expect(holders('{ customer(id: 1) { id } currencies { iso } }')).toEqual([]);
    expect(holders('{ transaction(id: 1) { status customer { id } currency { iso } } }')).toEqual(['transaction']);
  });

  it('names the field of a union or interface read through a fragment of a final type', () => {
    expect(holders('{ _entities(representations: []) { ... on Transaction { status } } }')).toEqual(['_entities']);
    expect(holders('{ n: node { ... on Transaction { status } } }')).toEqual(['n']);
  });
});

describe('finalAnswer', () => {
  const statusOnly = new Map([['status', FINAL_TX]]);

  it('needs no walk when no status is checked', () => {
    expect(finalAnswer({ transaction: { status: 'pending' } }, new Map())).toBe(true);
    expect(finalAnswer(null, new Map())).toBe(true);
  });

  it('is false for no answer, or one that is not an object, when a status is checked', () => {
    expect(finalAnswer(null, statusOnly)).toBe(false);
    expect(finalAnswer(undefined, statusOnly)).toBe(false);
    expect(finalAnswer('canceled', statusOnly)).toBe(false);
  });

  it('is false when a key that holds a final type holds null (not found yet) or a list with a null in it', () => {
    const held = new Set(['transaction', '_entities']);
    expect(finalAnswer({ transaction: null }, statusOnly, held)).toBe(false);
    expect(finalAnswer({ transaction: null }, statusOnly)).toBe(true);
    expect(finalAnswer({ _entities: [{ status: 'canceled' }, null] }, statusOnly, held)).toBe(false);
    expect(finalAnswer({ _entities: [{ status: 'canceled' }] }, statusOnly, held)).toBe(true);
    expect(finalAnswer({ transaction: { status: 'canceled', note: null, tags: ['a', null] } }, statusOnly, held)).toBe(true);
    // Only where the key holds it: a null elsewhere is a value like another.
    expect(finalAnswer({ transaction: { status: 'canceled' }, customer: null }, statusOnly, held)).toBe(true);
  });

  it('is true when every checked status is final, however deep and in lists', () => {
    expect(finalAnswer({ transaction: { id: '1', status: 'canceled' } }, statusOnly)).toBe(true);
    expect(finalAnswer({ a: [{ status: 'approved' }, { nested: { status: 'canceled' } }], b: { status: 'canceled' } }, statusOnly)).toBe(true);
  });

  it('is false when one status anywhere is not final', () => {
    expect(finalAnswer({ transaction: { status: 'pending' } }, statusOnly)).toBe(false);
    expect(finalAnswer({ a: [{ status: 'approved' }, [{ status: 'pending' }]] }, statusOnly)).toBe(false);
    expect(finalAnswer({ a: { b: { c: { status: 'pending' } } }, d: { status: 'canceled' } }, statusOnly)).toBe(false);
  });

  it('is false when a checked status is missing its value', () => {
    expect(finalAnswer({ transaction: { status: null } }, statusOnly)).toBe(false);
    expect(finalAnswer({ transaction: { status: 3 } }, statusOnly)).toBe(false);
  });

  it('walks past nulls and scalars in the answer', () => {
    // Only that it walks them: how a null object is judged is decided elsewhere.
    expect(() => finalAnswer({ t: { status: 'canceled', note: null, n: 3, tags: ['a', null] } }, statusOnly)).not.toThrow();
  });

  it('is false when a root object is missing, of any type, even with no status to check', () => {
    const roots = new Set(['customer', '_entities']);
    expect(finalAnswer({ customer: null }, new Map(), new Set(), new Set(['customer']))).toBe(false);
    expect(finalAnswer({ _entities: [{ id: '1' }, null] }, new Map(), new Set(), new Set(['_entities']))).toBe(false);
    expect(finalAnswer({ customer: { id: '1' }, _entities: [{ id: '2' }] }, new Map(), new Set(), roots)).toBe(true);
    expect(finalAnswer(null, new Map(), new Set(), roots)).toBe(false);
    // One root missing among several is enough.
    expect(finalAnswer({ customer: null, _entities: [{ id: '2' }] }, new Map(), new Set(), roots)).toBe(false);
    expect(finalAnswer({ customer: { id: '1' }, _entities: [null] }, new Map(), new Set(), roots)).toBe(false);
    // No answer, or one that is not an object, has no root object in it.
    expect(finalAnswer(undefined, new Map(), new Set(), roots)).toBe(false);
    expect(finalAnswer('customer', new Map(), new Set(), roots)).toBe(false);
    // A nested null under a root is that object's own fact (a transaction with no customer), not a miss.
    expect(finalAnswer({ transaction: { status: 'canceled', customer: null } }, statusOnly, new Set(['transaction']), new Set(['transaction']))).toBe(true);
  });

  it('reads the response keys it is given, not the word status', () => {
    const aliased = new Map([['state', FINAL_TX]]);
    expect(finalAnswer({ t: { state: 'pending', status: 'canceled' } }, aliased)).toBe(false);
    expect(finalAnswer({ t: { state: 'canceled', status: 'pending' } }, aliased)).toBe(true);
  });
});
