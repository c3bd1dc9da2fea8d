/**
 * Token bucket (Finagle's RetryBudget): retries add at most `ratio` of a failing route's traffic,
 * plus `capacity` at once; one per key and route, and one per route over all keys.
 */
export class RetryBudget {
  private tokens: number;
  constructor(
    private readonly ratio: number,
    private readonly capacity: number,
  ) {
    this.tokens = capacity;
  }
  deposit(): void {
    this.tokens = Math.min(this.capacity, this.tokens + this.ratio);
  }
  tryWithdraw(): boolean {
    // Tolerance: ten deposits of 0.1 must buy a retry despite floating point.
    if (this.tokens < 1 - 1e-9) return false;
    this.tokens -= 1;
    return true;
  }
  get available(): number {
    return this.tokens;
  }
}
