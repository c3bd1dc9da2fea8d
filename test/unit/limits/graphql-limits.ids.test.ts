/**
 * An id or a text in the variables never changes what an operation costs (only whether it
 * is given does), so `transaction(id: $id)` is priced once, not once per id: real traffic
 * reads a new id nearly every time. What is remembered must still price every request as a
 * fresh check would.
 */
import { parse } from 'graphql';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { operationCheck } from '../../../src/limits/graphql-limits.js';
import { buildSchema } from '../../../src/schema.js';

const priced = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../src/limits/operation-cost.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/limits/operation-cost.js')>();
  return {
    ...real,
    operationCost: (...args: Parameters<typeof real.operationCost>) => {
      priced.count += 1;
      return real.operationCost(...args);
    },
  };
});

describe('operation check, the same operation over many ids', () => {
  const config = loadConfig({ MAX_OPERATION_COST: '90' });
  const schema = buildSchema();
  let check: ReturnType<typeof operationCheck>;
  beforeEach(() => {
    check = operationCheck(schema, config.limits, config.pagination);
    priced.count = 0;
  });

  it('prices transaction(id) once for a thousand ids', () => {
    const document = parse('query T($id: ID!) { transaction(id: $id) { id customer { email } currency { iso } } }');
    for (let id = 1; id <= 1000; id++) expect(check.price(document, 'T', { id: String(id) })).toEqual({ refused: null, cost: 3 });
    expect(priced.count).toBe(1);
  });

  it('prices ids given as numbers and texts as a fresh check does, and still prices what does not coerce', () => {
    const document = parse('query P($id: ID, $after: String, $first: Int) { payout(id: $id) { id } transactions(first: $first, after: $after) { nodes { id } } }');
    const inputs: Record<string, unknown>[] = [
      { id: '1', after: 'abc', first: 5 },
      { id: 2, after: 'def', first: 5 },
      { id: null, after: null, first: 5 },
      {},
      { first: 5 },
      { id: '3', first: 100 },
      { id: { not: 'an id' }, first: 5 },
      { id: 1.5, first: 5 },
      { id: '4', after: 7, first: 5 },
      { id: true },
    ];
    for (const variables of [...inputs, ...inputs]) {
      const fresh = operationCheck(schema, config.limits, config.pagination).price(document, 'P', variables);
      const remembered = check.price(document, 'P', variables);
      expect({ cost: remembered.cost, refused: remembered.refused?.message ?? null }, JSON.stringify(variables)).toEqual({
        cost: fresh.cost,
        refused: fresh.refused?.message ?? null,
      });
    }
  });
});
