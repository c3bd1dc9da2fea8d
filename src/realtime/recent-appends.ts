/**
 * What this instance appended to the event log lately, to append again when the log started over (Redis back
 * empty): entries another instance had not read yet died with the log, and only their appender still has them.
 * Bounded by age, count and bytes; the oldest go first (docs/realtime.md, A log that started over).
 */

export interface RecentAppend {
  at: number;
  bytes: number;
  partition: number;
  /** Appends the entry again, as it was first appended; the script's reply. */
  redo(): Promise<[0] | [1 | 2, string, ...unknown[]]>;
}

export interface RecentAppendsLimits {
  /** Longer than any reader's lag: an entry older than this was read by every instance still reading. */
  maxAgeMs: number;
  maxEntries: number;
  maxBytes: number;
}

export class RecentAppends {
  private readonly entries: RecentAppend[] = [];
  private head = 0;
  private bytes = 0;

  constructor(
    private readonly limits: RecentAppendsLimits,
    private readonly now: () => number = Date.now,
  ) {}

  add(entry: RecentAppend): void {
    // One too big for the whole buffer is not kept: it would empty it.
    if (entry.bytes > this.limits.maxBytes) return;
    this.entries.push(entry);
    this.bytes += entry.bytes;
    this.trim();
  }

  /** The entries still within the age, oldest first; taking them empties the buffer (what is appended again comes back through `add`). */
  take(): RecentAppend[] {
    this.trim();
    const taken = this.entries.slice(this.head);
    this.entries.length = 0;
    this.head = 0;
    this.bytes = 0;
    return taken;
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  get byteSize(): number {
    return this.bytes;
  }

  private trim(): void {
    const oldest = this.now() - this.limits.maxAgeMs;
    while (this.head < this.entries.length) {
      const first = this.entries[this.head]!;
      if (first.at >= oldest && this.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.bytes -= first.bytes;
      this.head += 1;
    }
    // Compacted once the dropped half outweighs the kept one.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }
}
