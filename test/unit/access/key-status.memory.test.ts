/**
 * The key status's four LRUs grow with the keys seen, not with their bound, which still holds.
 */
import { describe, expect, it } from 'vitest';
import { KeyStatus } from '../../../src/access/key-status.js';

const MB = 1024 * 1024;

describe('KeyStatus, memory', () => {
  it('allocates nothing up front for its bound', () => {
    const before = process.memoryUsage().heapUsed;
    // Slots made up front would take about 120 MB of heap here, for the four maps.
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, max: 1_000_000 });
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * MB);
    expect(keys).toBeDefined();
  });

  it('still forgets the least recently proven key past its bound', () => {
    const keys = new KeyStatus({ rejectedTtlMs: 30_000, revalidateMs: 60_000, max: 2 });
    for (const id of ['a', 'b', 'c']) keys.accept(id.repeat(32));
    expect(keys.isProven('a'.repeat(32))).toBe(false);
    expect(keys.isProven('b'.repeat(32))).toBe(true);
    expect(keys.isProven('c'.repeat(32))).toBe(true);
  });
});
