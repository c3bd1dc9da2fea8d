/**
 * The gateway's price is read from the schema's @cost and @listSize (the IBM
 * GraphQL Cost Directive spec, as Apollo Router and Hive Gateway read it), so
 * changing a directive changes the price: one set of numbers for routers and gateway.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { buildSchema as buildPlainSchema, parse, print, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createCostEstimator, operationCost } from '../../../src/limits/operation-cost.js';
import { buildSchema, loadTypeDefs } from '../../../src/schema.js';

const settings = { defaultFirst: 20, maxFirst: 100 };
const pricer = (schema: GraphQLSchema) => {
  const estimator = createCostEstimator(schema, settings);
  return (query: string, variables: Record<string, unknown> = {}) => operationCost({ schema, document: parse(query), variables, estimator });
};

describe('the price follows the directives of schema/', () => {
  const cost = pricer(buildSchema());
  /** The subgraph schema with one edit of its SDL. */
  const edited = (from: string, to: string) => {
    const sdl = print(loadTypeDefs());
    expect(sdl).toContain(from);
    return pricer(buildSubgraphSchema({ typeDefs: parse(sdl.replace(from, to)) }));
  };

  it('prices the documented operations', () => {
    expect(cost('{ transactions(first: 50) { nodes { id customer { email } currency { iso } } } }')).toBe(151);
    expect(cost('{ transactions(first: 50) { edges { cursor node { id } } pageInfo { hasNextPage } totalCount } }')).toBe(51);
    expect(cost('{ transactions { nodes { id } } }')).toBe(21);
    expect(cost('{ transaction(id: "1") { id customer { id } amountMoney { amount } } }')).toBe(2);
    expect(cost('{ currencies { iso } }')).toBe(10);
    expect(cost('{ _entities(representations: [{ __typename: "Transaction", id: "1" }, { __typename: "Transaction", id: "2" }]) { ... on Transaction { customer { id } } } }')).toBe(4);
    const payouts = Array.from({ length: 7 }, (_, i) => ({ id: String(i), phoneNumber: { number: '1', country: 'BJ' } }));
    expect(cost('mutation ($p: [StartPayoutInput!]!) { startPayouts(payouts: $p) { userErrors { code } } }', { p: payouts })).toBe(8);
  });

  it('prices introspection at nothing: it reads the schema, not the upstream', () => {
    expect(cost('{ __schema { types { name fields { name args { name type { name ofType { name } } } } } } }')).toBe(0);
    expect(cost('{ __typename transaction(id: "1") { __typename id } }')).toBe(1);
  });

  it('a list is priced by its @listSize', () => {
    expect(edited('currencies: [Currency]! @listSize(assumedSize: 10)', 'currencies: [Currency]! @listSize(assumedSize: 3)')('{ currencies { iso } }')).toBe(3);
  });

  it('an entity is priced by its @cost', () => {
    const heavier = edited('type Transaction @key(fields: "id") {', 'type Transaction @key(fields: "id") @cost(weight: 4) {');
    expect(heavier('{ transaction(id: "1") { id } }')).toBe(4);
    expect(heavier('{ transactions(first: 10) { nodes { id } } }')).toBe(41);
  });

  it('an embedded object weighs what its @cost says', () => {
    const weighed = edited('type PaymentsMoney @cost(weight: 0) {', 'type PaymentsMoney @cost(weight: 2) {');
    expect(weighed('{ transaction(id: "1") { amountMoney { amount } } }')).toBe(3);
  });
});

/** The spec's rules on a schema of its own, with the directives declared as Federation declares them. */
describe('the IBM cost spec rules', () => {
  const schema = buildPlainSchema(`
    directive @cost(weight: Int!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
    directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
    scalar Heavy @cost(weight: 3)
    enum Kind { A B }
    type Query {
      book(id: ID!): Book
      books(first: Int, last: Int): [Book] @listSize(slicingArguments: ["first", "last"], requireOneSlicingArgument: false)
      shelf: [Book] @listSize(assumedSize: 4)
      unsized: [Book]
      page(first: Int): BookConnection @listSize(slicingArguments: ["first"], sizedFields: ["edges", "nodes"], requireOneSlicingArgument: false)
      search(tags: [String!] @cost(weight: 2)): Book
      order(lines: [Line!]): Book
      cheap: Book @cost(weight: 0)
    }
    type Book { id: ID! kind: Kind heavy: Heavy author: Author }
    type Author { name: String }
    input Line { sku: ID! @cost(weight: 3) note: String }
    type BookConnection { edges: [BookEdge] nodes: [Book] pageInfo: PageInfo }
    type BookEdge @cost(weight: 0) { cursor: String node: Book }
    type PageInfo @cost(weight: 0) { hasNextPage: Boolean }
  `);
  const cost = pricer(schema);

  it('objects weigh 1, scalars and enums 0 unless their @cost says otherwise', () => {
    expect(cost('{ book(id: "1") { id kind } }')).toBe(1);
    expect(cost('{ book(id: "1") { heavy author { name } } }')).toBe(1 + 3 + 1);
  });

  it('a @cost on a field replaces its type weight', () => {
    expect(cost('{ cheap { author { name } } }')).toBe(1);
  });

  it('a list costs its size times one item: the largest slicing argument, else the default page, else assumedSize, else 10', () => {
    expect(cost('{ books(first: 7) { id } }')).toBe(7);
    expect(cost('{ books(first: 3, last: 5) { author { name } } }')).toBe(5 * 2);
    expect(cost('{ books { id } }')).toBe(settings.defaultFirst);
    expect(cost('{ books(first: 1000) { id } }')).toBe(settings.maxFirst);
    expect(cost('{ shelf { id } }')).toBe(4);
    expect(cost('{ unsized { id } }')).toBe(10);
  });

  it('a connection multiplies its sized fields, not itself', () => {
    expect(cost('{ page(first: 6) { edges { cursor node { id } } pageInfo { hasNextPage } } }')).toBe(1 + 6 * 1);
    expect(cost('{ page(first: 6) { nodes { author { name } } } }')).toBe(1 + 6 * 2);
  });

  it('an argument with @cost adds its weight when given, an input field with @cost each time it is given', () => {
    expect(cost('{ search(tags: ["a", "b", "c"]) { id } }')).toBe(1 + 2);
    expect(cost('{ search { id } }')).toBe(1);
    expect(cost('{ order(lines: [{ sku: "1" }, { sku: "2", note: "x" }]) { id } }')).toBe(1 + 2 * 3);
  });

  it('refuses a connection whose other fields would be multiplied with it', () => {
    const bad = buildPlainSchema(`
      directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
      type Query { page(first: Int): Conn @listSize(slicingArguments: ["first"], sizedFields: ["nodes"]) }
      type Conn { nodes: [Item] owner: Item }
      type Item { id: ID }
    `);
    expect(() => createCostEstimator(bad, settings)).toThrow(/Conn\.owner/);
  });
});
