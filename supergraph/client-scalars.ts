/**
 * The TypeScript type of every custom scalar of payments.graphql as a client
 * sends and receives it (JSON), for graphql-codegen's `scalars` setting:
 * without it the client preset types each of them `unknown`. Import it into a
 * client's codegen config, or copy it; test/unit/supergraph/client-scalars.test.ts
 * fails when the SDL gains a scalar this map lacks.
 */
export const PAYMENTS_CLIENT_SCALARS = {
  ID: 'string',
  // Amounts as exact decimal strings ("2500.50"), never floats.
  Decimal: 'string',
  DateTime: 'string',
  URL: 'string',
  EmailAddress: 'string',
  CountryCode: 'string',
  JSONObject: 'Record<string, unknown>',
} as const;
