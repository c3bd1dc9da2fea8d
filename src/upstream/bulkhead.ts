/**
 * Per-route concurrency cap with a bounded wait queue: a burst waits its turn (a page fans out into
 * many reads of one route). One caller holds at most `callerShare`, and freed slots go round-robin,
 * so a caller flooding a slow route waits behind itself.
 */
export class Bulkhead {
  private active = 0;
  private queuedCount = 0;
  private readonly activeBy = new Map<string, number>();
  /** Waiters per caller, in arrival order; the map's order is the round-robin turn. */
  private readonly waitingBy = new Map<string, (() => void)[]>();
  private readonly callerLimit: number;
  private readonly callerQueueLimit: number;

  constructor(
    private readonly limit: number,
    private readonly queueLimit: number,
    callerShare = 1,
  ) {
    this.callerLimit = Math.max(1, Math.floor(limit * callerShare));
    this.callerQueueLimit = Math.floor(queueLimit * callerShare);
  }

  /** Resolves with a release function once a slot is held; false when none came in time. */
  acquire(waitMs: number, signal?: AbortSignal, caller = ''): Promise<(() => void) | false> {
    if (this.active < this.limit && this.held(caller) < this.callerLimit) return Promise.resolve(this.take(caller));
    const mine = this.waitingBy.get(caller) ?? [];
    if (this.queuedCount >= this.queueLimit || mine.length >= this.callerQueueLimit || waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', giveUp);
        resolve(this.take(caller));
      };
      const giveUp = () => {
        clearTimeout(timer);
        const queue = this.waitingBy.get(caller);
        const at = queue?.indexOf(grant) ?? -1;
        if (queue && at >= 0) {
          queue.splice(at, 1);
          this.queuedCount--;
          if (queue.length === 0) this.waitingBy.delete(caller);
        }
        resolve(false);
      };
      const timer = setTimeout(giveUp, waitMs);
      signal?.addEventListener('abort', giveUp, { once: true });
      mine.push(grant);
      this.waitingBy.set(caller, mine);
      this.queuedCount++;
    });
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.queuedCount;
  }

  private held(caller: string): number {
    return this.activeBy.get(caller) ?? 0;
  }

  private take(caller: string): () => void {
    this.active++;
    this.activeBy.set(caller, this.held(caller) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const left = this.held(caller) - 1;
      if (left > 0) this.activeBy.set(caller, left);
      else this.activeBy.delete(caller);
      this.grantNext();
    };
  }

  /** The first caller in turn that waits and is under its share gets the slot, then goes to the back. */
  private grantNext(): void {
    if (this.active >= this.limit) return;
    for (const [caller, queue] of this.waitingBy) {
      if (this.held(caller) >= this.callerLimit) continue;
      const next = queue.shift()!;
      this.queuedCount--;
      this.waitingBy.delete(caller);
      if (queue.length > 0) this.waitingBy.set(caller, queue);
      next();
      return;
    }
  }
}
