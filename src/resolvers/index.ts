/**
 * All resolvers, one file per domain (mirroring schema/), merged here with the
 * custom scalars (graphql-scalars' parsers, serialisers that keep upstream
 * values as sent: scalars.ts) and our own `Decimal`.
 */
import { JSONObjectResolver } from 'graphql-scalars';
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { currencyResolvers } from './currency.js';
import { customerResolvers } from './customer.js';
import { eventResolvers } from './event.js';
import { logResolvers } from './log.js';
import { DecimalScalar } from './money.js';
import { payoutResolvers } from './payout.js';
import { CountryCodeScalar, DateTimeScalar, EmailAddressScalar, URLScalar } from './scalars.js';
import { subscriptionResolvers } from './subscriptions.js';
import { transactionResolvers } from './transaction.js';
import { webhookResolvers } from './webhook.js';

const domains: Resolvers[] = [
  transactionResolvers,
  payoutResolvers,
  customerResolvers,
  currencyResolvers,
  webhookResolvers,
  eventResolvers,
  logResolvers,
  subscriptionResolvers,
];

/** Merges the domains' maps type by type (each domain extends Query and Mutation). */
function merge(maps: Resolvers[]): Resolvers {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map)) {
      merged[type] = { ...merged[type], ...(fields as Record<string, unknown>) };
    }
  }
  return merged as Resolvers;
}

export const resolvers: Resolvers = {
  ...merge(domains),
  DateTime: DateTimeScalar,
  JSONObject: JSONObjectResolver,
  EmailAddress: EmailAddressScalar,
  URL: URLScalar,
  CountryCode: CountryCodeScalar,
  Decimal: DecimalScalar,
};
