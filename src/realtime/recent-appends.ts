/**
 * What this instance appended to the event log lately, to append again when the log started over (Redis back
 * empty): entries another instance had not read yet died with the log, and only their appender still has them.
 * Bounded by age, count and bytes. Past its age an entry goes, oldest first; past the count or the bytes, the
 * oldest entry of the account holding the most bytes goes, so an account flooding webhooks pushes out its own
 * entries, never a quieter account's (docs/realtime.md, A log that started over).
 */

export interface RecentAppend {
  at: number;
  bytes: number;
  partition: number;
  /** Whose event it is: the share that pays for it when the buffer is full. */
  account: number;
  /** Appends the entry again, as it was first appended; the script's reply. */
  redo(): Promise<[0] | [1 | 2, string, ...unknown[]]>;
}

export interface RecentAppendsLimits {
  /** Longer than any reader's lag: an entry older than this was read by every instance still reading. */
  maxAgeMs: number;
  maxEntries: number;
  maxBytes: number;
}

interface Held {
  entry: RecentAppend;
  dropped: boolean;
}

/** One account's entries in arrival order; `head` skips those already gone. */
interface Share {
  held: Held[];
  head: number;
  bytes: number;
}

export class RecentAppends {
  /** Every entry in arrival order, for the age: one dropped from its account's share stays here, marked. */
  private readonly order: Held[] = [];
  private head = 0;
  private readonly shares = new Map<number, Share>();
  private count = 0;
  private bytes = 0;

  constructor(
    private readonly limits: RecentAppendsLimits,
    private readonly now: () => number = Date.now,
  ) {}

  add(entry: RecentAppend): void {
    // One too big for the whole buffer is not kept: it would empty it.
    if (entry.bytes > this.limits.maxBytes) return;
    const held: Held = { entry, dropped: false };
    this.order.push(held);
    let share = this.shares.get(entry.account);
    if (!share) this.shares.set(entry.account, (share = { held: [], head: 0, bytes: 0 }));
    share.held.push(held);
    share.bytes += entry.bytes;
    this.count += 1;
    this.bytes += entry.bytes;
    this.trim();
  }

  /** The entries still within the age, oldest first; taking them empties the buffer (what is appended again comes back through `add`). */
  take(): RecentAppend[] {
    this.trim();
    const taken = this.order.slice(this.head).filter((h) => !h.dropped).map((h) => h.entry);
    this.order.length = 0;
    this.head = 0;
    this.shares.clear();
    this.count = 0;
    this.bytes = 0;
    return taken;
  }

  get size(): number {
    return this.count;
  }

  get byteSize(): number {
    return this.bytes;
  }

  private trim(): void {
    const oldest = this.now() - this.limits.maxAgeMs;
    while (this.head < this.order.length) {
      const first = this.order[this.head]!;
      if (!first.dropped && first.entry.at >= oldest) break;
      // The oldest of all is also the oldest of its account.
      if (!first.dropped) this.dropOldest(this.shares.get(first.entry.account)!);
      this.head += 1;
    }
    while (this.count > this.limits.maxEntries || this.bytes > this.limits.maxBytes) this.dropOldest(this.heaviest());
    // Compacted once the dropped half outweighs the kept one.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }

  /** A scan of the accounts, made only when the buffer is over a bound: at most one account per entry kept. */
  private heaviest(): Share {
    let found: Share | undefined;
    for (const share of this.shares.values()) if (!found || share.bytes > found.bytes) found = share;
    return found!;
  }

  private dropOldest(share: Share): void {
    const held = share.held[share.head]!;
    held.dropped = true;
    share.head += 1;
    share.bytes -= held.entry.bytes;
    this.count -= 1;
    this.bytes -= held.entry.bytes;
    if (share.head === share.held.length) this.shares.delete(held.entry.account);
    else if (share.head > 1024 && share.head * 2 > share.held.length) {
      share.held.splice(0, share.head);
      share.head = 0;
    }
  }
}
