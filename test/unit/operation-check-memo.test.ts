/**
 * The operation check remembers what it admitted, per parsed document, so a
 * repeated operation is priced once. What it remembers must never admit
 * another operation: other variables, another operation name, or a document
 * it has not seen are priced afresh.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { operationCheck } from '../../src/limits/graphql-limits.js';
import { buildSchema } from '../../src/schema.js';

describe('operation check, repeated', () => {
  const config = loadConfig({ MAX_OPERATION_COST: '90' });
  const check = operationCheck(buildSchema(), config.limits, config.pagination);
  // Priced (operation-cost.ts): Page with first 5 costs 6, with first 100 costs 101; Big costs 201.
  const document = parse(`
    query Page($first: Int) { transactions(first: $first) { nodes { id customer { email } } } }
    query Big { transactions(first: 100) { nodes { id customer { email } currency { iso } } } }
  `);

  it('admits the same operation again, and still refuses it with variables that cost too much', () => {
    expect(check(document, 'Page', { first: 5 })).toBeNull();
    expect(check(document, 'Page', { first: 5 })).toBeNull();
    expect(check(document, 'Page', { first: 100 })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
    // Refusals are not remembered as admissions either way round.
    expect(check(document, 'Page', { first: 100 })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
    expect(check(document, 'Page', { first: 5 })).toBeNull();
  });

  it('prices another operation of the same document on its own', () => {
    expect(check(document, 'Page', {})).toBeNull();
    expect(check(document, 'Big', {})?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });

  it('keeps refusing after many admitted variable sets have filled the memory', () => {
    for (let first = 1; first <= 80; first++) check(document, 'Page', { first: first % 10 });
    for (let n = 0; n < 100; n++) check(document, 'Page', { first: 1, n });
    expect(check(document, 'Page', { first: 100 })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });
});
