import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../../src/upstream/byte-budget.js';

describe('ByteBudget', () => {
  it('grows a lease up to the per-key ceiling, and frees it on release', () => {
    const budget = new ByteBudget({ totalBytes: 100, perKeyBytes: 40 });
    const a = budget.lease('k');
    expect(a.grow(30)).toBe(true);
    const b = budget.lease('k');
    expect(b.grow(11)).toBe(false);
    expect(b.grow(10)).toBe(true);
    expect(budget.heldBy('k')).toBe(40);
    a.release();
    a.release();
    expect(budget.heldBy('k')).toBe(10);
    expect(b.grow(40)).toBe(true);
    b.release();
    expect(budget.inFlight).toBe(0);
    expect(budget.heldBy('k')).toBe(0);
  });

  it('refuses any key once the total is held, and counts only growth', () => {
    const budget = new ByteBudget({ totalBytes: 50, perKeyBytes: 40 });
    const a = budget.lease('a');
    const b = budget.lease('b');
    expect(a.grow(40)).toBe(true);
    expect(a.grow(20)).toBe(true);
    expect(b.grow(11)).toBe(false);
    expect(b.grow(10)).toBe(true);
    expect(budget.inFlight).toBe(50);
    a.release();
    expect(b.grow(40)).toBe(true);
    b.release();
    expect(budget.inFlight).toBe(0);
  });

  it('takes nothing after release', () => {
    const budget = new ByteBudget({ totalBytes: 50, perKeyBytes: 50 });
    const a = budget.lease('a');
    a.release();
    expect(a.grow(1)).toBe(false);
    expect(budget.inFlight).toBe(0);
  });
});
