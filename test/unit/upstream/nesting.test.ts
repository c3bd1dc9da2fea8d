/** How deep a value may nest: counted in objects and arrays, leaves and lossless numbers free. */
import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, nestsWithin } from '../../../src/upstream/nesting.js';

/** `levels` arrays or objects, one inside the other, around `leaf`. */
function nested(levels: number, leaf: unknown = 1, kind: 'array' | 'object' = 'array'): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = kind === 'array' ? [value] : { inner: value };
  return value;
}

describe('nestsWithin', () => {
  it('counts each array or object as one level, exactly at the bound', () => {
    for (const kind of ['array', 'object'] as const) {
      expect(nestsWithin(nested(3, 1, kind), 3)).toBe(true);
      expect(nestsWithin(nested(4, 1, kind), 3)).toBe(false);
    }
  });

  it('takes scalars, null and lossless numbers as leaves, even at zero levels', () => {
    for (const leaf of [1, 'text', null, true, undefined, new LosslessNumber('12345678901234567890.5')]) expect(nestsWithin(leaf, 0)).toBe(true);
    expect(nestsWithin({}, 0)).toBe(false);
    expect(nestsWithin([], 1)).toBe(true);
  });

  it('finds the one deep branch among shallow siblings, in arrays and objects', () => {
    expect(nestsWithin({ a: 1, b: [1, 2], c: { d: nested(5) } }, 6)).toBe(false);
    expect(nestsWithin({ a: 1, b: [1, 2], c: { d: nested(5) } }, 7)).toBe(true);
    expect(nestsWithin([1, 2, nested(5)], 5)).toBe(false);
  });

  it('refuses a value nested far beyond MAX_NESTING without overflowing the stack', () => {
    expect(nestsWithin(nested(MAX_NESTING), MAX_NESTING)).toBe(true);
    expect(nestsWithin(nested(MAX_NESTING + 1), MAX_NESTING)).toBe(false);
    expect(nestsWithin(nested(200_000), MAX_NESTING)).toBe(false);
  });
});
