/**
 * Identical unkeyed mutations in flight at once share one run: eight
 * `sendTransaction`s for one transaction sent together by one caller (a
 * double-clicked button, a client retrying before the first answer) would
 * otherwise prompt the payer's phone eight times. The first runs; the others
 * wait for it and get its result, or its error. Nothing is kept once it
 * settles: a later identical call runs again, as an unkeyed mutation always
 * has (an idempotency key is what makes a repeat safe across time).
 */

/** Runs coalesced per caller at once; beyond it a call runs on its own, as before. */
export const MAX_IN_FLIGHT_PER_CALLER = 256;

export class InFlight {
  /** Per caller, the running call by its fingerprint; a caller's map goes when its last call settles. */
  private readonly byCaller = new Map<string, Map<string, Promise<unknown>>>();

  /** Runs `run`, or joins the identical call (same caller, same fingerprint) already running. */
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

  /** Calls running coalesced now (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const calls of this.byCaller.values()) n += calls.size;
    return n;
  }
}
