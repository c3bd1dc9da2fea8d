/**
 * Turns at decoding large upstream answers: one slice at a time, keys in rotation, the event loop
 * served between slices, so one tenant's huge pages neither stall the process nor take most of
 * the decoding time (docs/performance.md, "Large pages").
 */

/** How long one slice may run before it gives its turn up; a few of these are the longest stall. */
export const SLICE_MS = 8;

export class DecodeTurns {
  /** Keys waiting, in turn order; each with its waiting slices (usually one per answer in decoding). */
  private readonly waiting = new Map<string, (() => void)[]>();
  private pumping = false;

  constructor(readonly sliceMs: number = SLICE_MS) {}

  /** Resolves when `keyId` may run its next slice; the slice then runs until it awaits again. */
  turn(keyId: string): Promise<void> {
    return new Promise((resolve) => {
      let queue = this.waiting.get(keyId);
      if (!queue) this.waiting.set(keyId, (queue = []));
      queue.push(resolve);
      if (!this.pumping) {
        this.pumping = true;
        setImmediate(this.pump);
      }
    });
  }

  /** Keys waiting now (metrics and tests). */
  get keysWaiting(): number {
    return this.waiting.size;
  }

  /** One slice per pass: the next is started from the check phase, after the I/O that came in meanwhile. */
  private readonly pump = (): void => {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.pumping = false;
      return;
    }
    const [keyId, queue] = next.value;
    // The key goes to the back of the rotation, or out when it has nothing more waiting.
    this.waiting.delete(keyId);
    const resolve = queue.shift()!;
    if (queue.length > 0) this.waiting.set(keyId, queue);
    resolve();
    setImmediate(this.pump);
  };
}
