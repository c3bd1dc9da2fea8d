import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/schema.js';
import { resolvers } from '../../src/resolvers/index.js';
import * as models from '../../src/upstream/models.js';

/**
 * The typed resolver maps let a field go unresolved (every resolver is
 * optional), so this is the check that no schema field of a REST-backed type
 * lacks a source: either a resolver, or a model key of the same name.
 */
const MAPPED: Record<string, { shape: Record<string, unknown> }> = {
  Transaction: models.transactionModel,
  Payout: models.payoutModel,
  PaymentIntent: models.paymentIntentModel,
  Customer: models.customerModel,
  PaymentsPhoneNumber: models.phoneNumberModel,
  Currency: models.currencyModel,
  Webhook: models.webhookModel,
  Event: models.eventModel,
  Log: models.logModel,
};

describe('schema sources', () => {
  const schema = buildSchema();

  it.each(Object.entries(MAPPED))('every field of %s has a resolver or a model key of its name', (typeName, model) => {
    const type = schema.getType(typeName);
    expect(isObjectType(type)).toBe(true);
    const typeResolvers = (resolvers as Record<string, Record<string, unknown>>)[typeName] ?? {};
    const unsourced = Object.keys(isObjectType(type) ? type.getFields() : {}).filter(
      (field) => !(field in typeResolvers) && !(field in model.shape),
    );
    expect(unsourced).toEqual([]);
  });

  it('every root field has a resolver', () => {
    const missing: string[] = [];
    for (const root of ['Query', 'Mutation', 'Subscription'] as const) {
      const fields = schema.getType(root);
      const rootResolvers = (resolvers as Record<string, Record<string, unknown>>)[root] ?? {};
      for (const name of Object.keys(isObjectType(fields) ? fields.getFields() : {})) {
        if (!name.startsWith('_') && !(name in rootResolvers)) missing.push(`${root}.${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
