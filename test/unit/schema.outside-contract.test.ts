/**
 * The root fields and arguments the design's outside contract names
 * (docs/graphql-contract.md, Root fields; checked against a running gateway
 * by ../shared/tools/contract-check.mjs), as a client sees them through
 * introspection. Introspection hides deprecated arguments unless asked, so
 * deprecating a contract argument breaks the contract: this fails first.
 */
import { graphqlSync } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/schema.js';

const CONTRACT: Record<string, Record<string, string[]>> = {
  Query: {
    transaction: ['id'], transactions: ['first', 'after', 'filter'], payout: ['id'], payouts: ['first', 'after', 'filter'],
    customer: ['id'], customers: ['first', 'after', 'filter'], currency: ['id'], currencies: [], webhook: ['id'], webhooks: [],
    event: ['id'], events: ['first', 'after', 'filter'], log: ['id'], logs: ['first', 'after'],
  },
  Mutation: {
    createTransaction: ['input'], updateTransaction: ['id', 'input'], createTransactionToken: ['id'], sendTransaction: ['id', 'mode', 'phoneNumber'],
    createPayout: ['input'], updatePayout: ['id', 'input'], startPayouts: ['payouts'], createCustomer: ['input'],
  },
  Subscription: { transactionUpdated: ['id'], payoutUpdated: ['id'], paymentEvent: ['types'] },
};

describe('the outside contract, as introspection shows it', () => {
  const result = graphqlSync({ schema: buildSchema(), source: '{ __schema { types { name fields { name isDeprecated args { name } } } } }' });
  const types = new Map(((result.data as { __schema: { types: { name: string; fields: { name: string; isDeprecated: boolean; args: { name: string }[] }[] | null }[] } }).__schema.types).map((t) => [t.name, t]));

  it.each(Object.entries(CONTRACT).flatMap(([root, fields]) => Object.entries(fields).map(([field, args]) => [`${root}.${field}`, root, field, args] as const)))(
    '%s is there with its arguments, none of them deprecated',
    (_name, root, field, args) => {
      const found = types.get(root)?.fields?.find((f) => f.name === field);
      expect(found, `${root}.${field}`).toBeDefined();
      expect(found!.isDeprecated).toBe(false);
      expect(args.filter((a) => !found!.args.some((x) => x.name === a))).toEqual([]);
    },
  );
});
