/** The retry budget: a full bucket of `capacity` retries, then `ratio` of one per deposit. */
import { describe, expect, it } from 'vitest';
import { RetryBudget } from '../../../src/upstream/retry-budget.js';

describe('RetryBudget', () => {
  it('starts full: `capacity` retries at once, then none', () => {
    const budget = new RetryBudget(0.1, 3);
    expect([budget.tryWithdraw(), budget.tryWithdraw(), budget.tryWithdraw(), budget.tryWithdraw()]).toEqual([true, true, true, false]);
    expect(budget.available).toBeCloseTo(0);
  });

  it('buys one retry for every ten deposits of 0.1, floating point notwithstanding', () => {
    const budget = new RetryBudget(0.1, 2);
    budget.tryWithdraw();
    budget.tryWithdraw();
    for (let i = 0; i < 9; i++) budget.deposit();
    expect(budget.tryWithdraw()).toBe(false);
    budget.deposit();
    expect(budget.tryWithdraw()).toBe(true);
    expect(budget.tryWithdraw()).toBe(false);
  });

  it('never holds more than its capacity, however many calls succeed', () => {
    const budget = new RetryBudget(0.5, 2);
    for (let i = 0; i < 100; i++) budget.deposit();
    expect(budget.available).toBe(2);
    expect([budget.tryWithdraw(), budget.tryWithdraw(), budget.tryWithdraw()]).toEqual([true, true, false]);
  });
});
