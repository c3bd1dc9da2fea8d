/** The orders subgraph's SDL (orders-subgraph.ts serves it; the schema check composes it beside payments). */
export const ORDERS_SDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])

type Query {
  orders: [Order!]!
}

type Order @key(fields: "id") {
  id: ID!
  reference: String!
  transaction: Transaction
  customer: Customer
}

type Transaction @key(fields: "id", resolvable: false) {
  id: ID!
}

type Customer @key(fields: "id") {
  id: ID!
  orderCount: Int!
}
`;
