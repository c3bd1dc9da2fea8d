/**
 * Output scalars over values the upstream sent. graphql-scalars' own
 * serialisers rewrite (a `+01:00` time becomes UTC, microseconds become
 * milliseconds, a number is read as milliseconds, a URL is re-cased) or throw,
 * and a throw would surface as INTERNAL_SERVER_ERROR. Here a value is served
 * exactly as the upstream sent it (after the boundary normalised timestamps,
 * src/upstream/timestamps.ts) when it is valid, and a value the scalar cannot
 * represent fails its own field as UPSTREAM_ERROR.
 *
 * Inputs: `DateTime` is parsed by graphql-scalars unchanged. `EmailAddress`,
 * `URL` and `CountryCode` take any string, which the mutation then judges
 * (src/payments/rules.ts, `InputRule`): a malformed value is a `userErrors`
 * entry on its field instead of a refused request (docs/graphql-contract.md,
 * Mutations), and the scalar names stay, so operations declaring variables
 * of these types keep working.
 */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { CountryCodeResolver, DateTimeResolver, EmailAddressResolver, URLResolver } from 'graphql-scalars';
import { UpstreamInvalidResponseError } from '../upstream/index.js';
import { RFC3339 } from '../upstream/index.js';

function unrepresentable(scalar: string): UpstreamInvalidResponseError {
  // The value itself stays out of the message: it is upstream data, possibly personal.
  return new UpstreamInvalidResponseError({ route: 'response', detail: `a value the ${scalar} scalar cannot represent` });
}

/** `scalar` with a serialiser that passes valid upstream values through untouched and blames the upstream for the rest. */
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

/** `scalar` whose inputs are any string, left for the mutation's rules to judge; only a non-string is refused here. */
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
