import { parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { fragmentsOf, isIncluded, selectedFieldNames } from '../../../src/graphql/selection.js';

/** The root field names the operation of `source` executes with `variables`. */
function rootFields(source: string, variables: Record<string, unknown> = {}): string[] {
  const document = parse(source);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!;
  return selectedFieldNames(operation.selectionSet, fragmentsOf(document.definitions), variables);
}

describe('selectedFieldNames', () => {
  it('lists plain fields in document order, repeats included', () => {
    expect(rootFields('{ a b a }')).toEqual(['a', 'b', 'a']);
  });

  it('goes through named and inline fragments, nested', () => {
    expect(rootFields('{ a ...F ... on Query { c ...G } } fragment F on Query { b } fragment G on Query { d }')).toEqual(['a', 'b', 'c', 'd']);
  });

  it.each([
    ['@skip(if: true)', []],
    ['@skip(if: false)', ['b']],
    ['@include(if: true)', ['b']],
    ['@include(if: false)', []],
    ['@skip(if: false) @include(if: false)', []],
    ['@skip(if: true) @include(if: true)', []],
    ['@skip(if: false) @include(if: true)', ['b']],
  ])('a field with %s', (directives, kept) => {
    expect(rootFields(`{ a b ${directives} }`)).toEqual(['a', ...kept]);
  });

  it.each([
    [{ s: true }, ['a']],
    [{ s: false }, ['a', 'b']],
  ])('@skip(if: $s) with %j', (variables, expected) => {
    expect(rootFields('query ($s: Boolean!) { a b @skip(if: $s) }', variables)).toEqual(expected);
  });

  it.each([
    [{ i: true }, ['a', 'b']],
    [{ i: false }, ['a']],
  ])('@include(if: $i) with %j', (variables, expected) => {
    expect(rootFields('query ($i: Boolean!) { a b @include(if: $i) }', variables)).toEqual(expected);
  });

  it('drops a named fragment spread skipped by its directive, keeps it otherwise', () => {
    const source = 'query ($s: Boolean!) { a ...F @skip(if: $s) } fragment F on Query { b }';
    expect(rootFields(source, { s: true })).toEqual(['a']);
    expect(rootFields(source, { s: false })).toEqual(['a', 'b']);
  });

  it('drops an inline fragment excluded by @include, and fields skipped inside fragments', () => {
    expect(rootFields('{ a ... @include(if: false) { b } }')).toEqual(['a']);
    expect(rootFields('{ a ...F } fragment F on Query { b @skip(if: true) c }')).toEqual(['a', 'c']);
  });

  it('an undefined selection set selects nothing', () => {
    expect(selectedFieldNames(undefined, {})).toEqual([]);
  });
});

describe('isIncluded', () => {
  it('follows graphql-js: skip wins over include', () => {
    const document = parse('{ a @skip(if: true) @include(if: true) }');
    const operation = document.definitions[0] as OperationDefinitionNode;
    expect(isIncluded(operation.selectionSet.selections[0]!, {})).toBe(false);
  });
});
