/**
 * Identical unkeyed mutations in flight at once share one run (a double-click would prompt the payer's phone
 * twice). Nothing is kept once it settles: only an idempotency key makes a repeat safe across time.
 */

/** Beyond it a call runs on its own. */
export const MAX_IN_FLIGHT_PER_CALLER = 256;

export class InFlight {
  private readonly byCaller = new Map<string, Map<string, Promise<unknown>>>();

  join<T>(callerId: string, fingerprint: string, run: () => Promise<T>): Promise<T> {
    let calls = this.byCaller.get(callerId);
    const running = calls?.get(fingerprint);
    if (running) return running as Promise<T>;
    if (calls && calls.size >= MAX_IN_FLIGHT_PER_CALLER) return run();
    if (!calls) {
      calls = new Map();
      this.byCaller.set(callerId, calls);
    }
    const mine = calls;
    const settled = run().finally(() => {
      mine.delete(fingerprint);
      if (mine.size === 0 && this.byCaller.get(callerId) === mine) this.byCaller.delete(callerId);
    });
    mine.set(fingerprint, settled);
    return settled;
  }

  get size(): number {
    let n = 0;
    for (const calls of this.byCaller.values()) n += calls.size;
    return n;
  }
}
