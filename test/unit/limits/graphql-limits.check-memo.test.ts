/**
 * The operation check remembers what it admitted, per parsed document, so a
 * repeated operation is priced once. What it remembers must never admit
 * another operation: other variables, another operation name, or a document
 * it has not seen are priced afresh.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { operationCheck } from '../../../src/limits/graphql-limits.js';
import { buildSchema } from '../../../src/schema.js';

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

  it('remembers no admission it did not price: variables that do not coerce, then ones that JSON writes alike', () => {
    const aliases = ['a', 'b', 'c', 'd', 'e'].map((name) => `${name}: transactions(first: $first) { nodes { id } }`).join(' ');
    const doc = parse(`query P($first: Int) { ${aliases} }`);
    // With `first` null the default applies: 5 lists of 20 cost 105, over the limit of 90.
    expect(check(doc, 'P', { first: null })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
    // JSON.parse('1e400') is Infinity: not an Int, so it is not priced (execution refuses it)...
    expect(check(doc, 'P', { first: JSON.parse('1e400') as number })).toBeNull();
    // ...and JSON writes it as null: the null request must still be priced and refused.
    expect(check(doc, 'P', { first: null })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });

  it('tells an absent variable from a null one: its default may cost more', () => {
    const doc = parse('query D($first: Int = 100) { transactions(first: $first) { nodes { id } } }');
    // An explicit null is the field's default (20 items); an absent variable takes the operation's (100).
    expect(check(doc, 'D', { first: null })).toBeNull();
    expect(check(doc, 'D', {})?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });

  it('decides the same with undeclared variables or long ones', () => {
    expect(check(document, 'Page', { first: 5, junk: 'x'.repeat(10_000) })).toBeNull();
    expect(check(document, 'Page', { first: 100, junk: 'x'.repeat(10_000) })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
    const doc = parse('query L($first: Int, $after: String) { transactions(first: $first, after: $after) { nodes { id } } }');
    const after = 'y'.repeat(5_000);
    expect(check(doc, 'L', { first: 5, after })).toBeNull();
    expect(check(doc, 'L', { first: 100, after })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });

  it('keeps a variable named __proto__ apart like any other', () => {
    const doc = parse('query P($__proto__: Int) { transactions(first: $__proto__) { nodes { id } } }');
    expect(check(doc, 'P', JSON.parse('{"__proto__": 2}') as Record<string, unknown>)).toBeNull();
    expect(check(doc, 'P', JSON.parse('{"__proto__": 100}') as Record<string, unknown>)?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });

  it('refuses variables nested past the stack as execution would, not with an internal error', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(() => check(document, 'Page', { first: deep })).not.toThrow();
  });

  it('keeps refusing after many admissions', () => {
    for (let first = 1; first <= 80; first++) check(document, 'Page', { first: first % 10 });
    for (let n = 0; n < 100; n++) check(document, 'Page', { first: 1, n });
    expect(check(document, 'Page', { first: 100 })?.extensions.code).toBe('OPERATION_TOO_COSTLY');
  });
});
