/**
 * The payments subgraph composed with subgraphs it has never met: the
 * committed SDL (what `rover` and GraphOS compose) beside a stranger that
 * defines the value types commerce subgraphs usually define for themselves
 * (`UserError`, `PhoneNumber`, `Money`, a Relay `PageInfo`), each in its own
 * shape. Composition must succeed, query planning must be able to reach
 * every field of both, and the shipped Rover config must compose as it is.
 */
import { existsSync, readFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { assertObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const SUPERGRAPH_DIR = new URL('../../supergraph/', import.meta.url);
const paymentsSdl = readFileSync(new URL('payments.graphql', SUPERGRAPH_DIR), 'utf8');

const FEDERATION = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])';

/** A storefront subgraph with its own ideas of what an error, a phone number and money are. */
const stranger = `
  ${FEDERATION}
  type Query {
    cart(id: ID!): Cart
    carts(first: Int): CartConnection!
  }
  type Mutation {
    checkout(cartId: ID!): CheckoutPayload!
  }
  type Cart @key(fields: "id") {
    id: ID!
    total: Money!
    contact: PhoneNumber
  }
  type CartConnection {
    nodes: [Cart!]!
    pageInfo: PageInfo!
  }
  type CheckoutPayload {
    cart: Cart
    userErrors: [UserError!]!
  }
  "A storefront's shape: a field path and a free-form code."
  type UserError {
    field: [String!]
    message: String!
    code: String!
  }
  type PhoneNumber {
    e164: String!
  }
  type Money {
    amount: Float!
    currencyCode: String!
  }
  "Relay's PageInfo, shared as Relay defines it."
  type PageInfo @shareable {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }
`;

function compose(subgraphs: { name: string; sdl: string }[]) {
  return composeServices(subgraphs.map(({ name, sdl }) => ({ name, url: `http://${name}.invalid/graphql`, typeDefs: parse(sdl) })));
}

describe('composition with subgraphs that define their own value types', () => {
  it('composes beside a stranger’s UserError, PhoneNumber, Money and Relay PageInfo, every field of both reachable', () => {
    const result = compose([
      { name: 'payments', sdl: paymentsSdl },
      { name: 'storefront', sdl: stranger },
    ]);
    // composeServices also validates satisfiability: an error here would name a field the
    // query planner could not reach.
    expect(result.errors?.map((e) => e.message) ?? []).toEqual([]);
    const supergraph = result.schema!.toAPISchema().toGraphQLJSSchema();
    // The stranger's types keep their shape; the payments ones live under their own names.
    const fields = (name: string) => assertObjectType(supergraph.getType(name)).getFields();
    expect(Object.keys(fields('UserError')).sort()).toEqual(['code', 'field', 'message']);
    expect(String(fields('UserError').code!.type)).toBe('String!');
    expect(Object.keys(fields('Money')).sort()).toEqual(['amount', 'currencyCode']);
    for (const name of ['PaymentsUserError', 'PaymentsUserErrorCode', 'PaymentsPhoneNumber', 'PaymentsMoney', 'PageInfo']) {
      expect(supergraph.getType(name), name).toBeDefined();
    }
    expect(String(fields('TransactionPayload').userErrors!.type)).toBe('[PaymentsUserError!]!');
    expect(String(fields('Transaction').amountMoney!.type)).toBe('PaymentsMoney');
  });

  it('refuses a PageInfo that is not shared, so the one value type kept under its Relay name is a stated rule', () => {
    const unshared = stranger.replace('type PageInfo @shareable {', 'type PageInfo {');
    const result = compose([
      { name: 'payments', sdl: paymentsSdl },
      { name: 'storefront', sdl: unshared },
    ]);
    expect(result.errors?.map((e) => e.message).join('\n')).toMatch(/Non-shareable field "PageInfo\.hasNextPage"/);
  });
});

describe('supergraph/supergraph.yaml', () => {
  const config = parseYaml(readFileSync(new URL('supergraph.yaml', SUPERGRAPH_DIR), 'utf8')) as {
    federation_version: string;
    subgraphs: Record<string, { routing_url: string; schema: { file?: string; subgraph_url?: string } }>;
  };

  it('composes as shipped: every subgraph schema is a committed file, and together they compose', () => {
    const subgraphs = Object.entries(config.subgraphs).map(([name, { schema }]) => {
      expect(schema.file, `${name} needs a running server to compose`).toBeDefined();
      const file = new URL(schema.file!, SUPERGRAPH_DIR);
      expect(existsSync(file), String(file)).toBe(true);
      return { name, sdl: readFileSync(file, 'utf8') };
    });
    expect(subgraphs.map((s) => s.name)).toContain('payments');
    expect(compose(subgraphs).errors ?? []).toEqual([]);
  });

  it('asks Rover for the composition version these tests compose with', () => {
    const installed = (JSON.parse(readFileSync(new URL('../../node_modules/@apollo/composition/package.json', import.meta.url), 'utf8')) as { version: string }).version;
    expect(config.federation_version).toBe(`=${installed}`);
  });
});
