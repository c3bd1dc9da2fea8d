import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createCostEstimator, operationCost } from '../../../src/limits/operation-cost.js';
import { buildSchema } from '../../../src/schema.js';

describe('operation cost of statusHistory', () => {
  const schema = buildSchema();
  const estimator = createCostEstimator(schema, { defaultFirst: 20, maxFirst: 100 });
  const cost = (query: string) => operationCost({ schema, document: parse(query), variables: {}, estimator });

  it('prices one upstream call per object whose history is selected, and nothing when it is not', () => {
    const without = cost('{ transactions(first: 10) { nodes { id customer { email } } } }');
    const withHistory = cost('{ transactions(first: 10) { nodes { id customer { email } statusHistory { status at } } } }');
    expect(withHistory - without).toBe(10);
    expect(cost('{ payout(id: "1") { statusHistory { status } } }') - cost('{ payout(id: "1") { id } }')).toBe(1);
  });
});
