import { describe, expect, it } from 'vitest';
import { decodeResult, encodeResult } from '../../../src/idempotency/result.js';

const meta = { order: 42, lines: Array.from({ length: 9_000 }, (_, i) => `line-${i}`.padEnd(100, 'x')) };
const args = { input: { description: 'd', customMetadata: meta }, idempotencyKey: 'k' };
const result = { transaction: { id: 7, description: 'd', custom_metadata: meta }, userErrors: [] };

describe('what an idempotency record keeps of a result', () => {
  it('leaves out the 900 KB of metadata the result echoes, and a replay rebuilds the same result', () => {
    const text = encodeResult(result, args, 1024 * 1024);
    expect(text.length).toBeLessThan(300);
    expect(decodeResult(text, args)).toEqual(result);
  });

  it('keeps a result with nothing echoed as its plain JSON', () => {
    const small = { transaction: { id: 1 }, userErrors: [] };
    expect(encodeResult(small, args, 1024)).toBe(JSON.stringify(small));
  });

  it('keeps a value that only resembles the input (not its exact text)', () => {
    const changed = { transaction: { id: 7, custom_metadata: { ...meta, order: 43 } } };
    expect(decodeResult(encodeResult(changed, args, 4 * 1024 * 1024), args)).toEqual(changed);
  });

  it('does not keep a result over the cap, and its replay is refused with IDEMPOTENCY_RESULT_NOT_KEPT', () => {
    const text = encodeResult({ transaction: { id: 7, notes: 'n'.repeat(5_000) } }, args, 4096);
    expect(text).toBe('!');
    expect(() => decodeResult(text, args)).toThrow(expect.objectContaining({ extensions: { code: 'IDEMPOTENCY_RESULT_NOT_KEPT' } }));
  });
});
