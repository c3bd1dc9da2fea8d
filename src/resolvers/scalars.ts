/**
 * graphql-scalars' serialisers rewrite values or throw (an INTERNAL_SERVER_ERROR):
 * here a valid upstream value is served as sent, an invalid one fails its field
 * as UPSTREAM_ERROR. Inputs of `EmailAddress`, `URL` and `CountryCode` take any
 * string for the mutation to judge, so a bad one is a `userErrors` entry.
 */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { CountryCodeResolver, DateTimeResolver, EmailAddressResolver, URLResolver } from 'graphql-scalars';
import { UpstreamInvalidResponseError } from '../upstream/index.js';
import { RFC3339 } from '../upstream/index.js';

function unrepresentable(scalar: string): UpstreamInvalidResponseError {
  // The value itself stays out of the message: it is upstream data, possibly personal.
  return new UpstreamInvalidResponseError({ route: 'response', detail: `a value the ${scalar} scalar cannot represent` });
}

function servedAsSent(scalar: GraphQLScalarType, passThrough: (value: unknown) => boolean): GraphQLScalarType {
  const config = scalar.toConfig();
  return new GraphQLScalarType({
    ...config,
    serialize(value) {
      if (passThrough(value)) return value;
      try {
        return config.serialize!(value);
      } catch {
        throw unrepresentable(scalar.name);
      }
    },
  });
}

function anyStringIn(scalar: GraphQLScalarType): GraphQLScalarType {
  const refuse = () => new GraphQLError(`${scalar.name} input must be a string; its form is checked by the mutation, which reports a bad one in userErrors.`);
  return new GraphQLScalarType({
    ...scalar.toConfig(),
    parseValue(value) {
      if (typeof value !== 'string') throw refuse();
      return value;
    },
    parseLiteral(ast) {
      if (ast.kind !== Kind.STRING) throw refuse();
      return ast.value;
    },
  });
}

export const DateTimeScalar = servedAsSent(DateTimeResolver, (v) => typeof v === 'string' && RFC3339.test(v) && !Number.isNaN(Date.parse(v)));
export const URLScalar = anyStringIn(servedAsSent(URLResolver, (v) => typeof v === 'string' && URL.canParse(v)));
export const EmailAddressScalar = anyStringIn(servedAsSent(EmailAddressResolver, () => false));
export const CountryCodeScalar = anyStringIn(servedAsSent(CountryCodeResolver, () => false));
