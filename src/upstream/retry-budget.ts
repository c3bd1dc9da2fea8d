/**
 * Token bucket (Finagle's RetryBudget idea): first attempts deposit
 * `ratio` tokens, a retry withdraws one, so in the long run retries add at
 * most `ratio` of the traffic to a failing route, plus `capacity` at once.
 * resilience.ts keeps one per key and route, so one key's retries spend only its own, and one per route,
 * so many keys together retry no more than one did.
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
