/**
 * What this instance appended to the event log lately, to append again when the log started over (Redis back
 * empty): entries another instance had not read yet died with the log, and only their appender still has them.
 * Bounded by age, count and bytes, with a share per account: over its share an account's own oldest entries go,
 * so one account flooding webhooks pushes out its own; past the whole's bounds, or its age, the oldest of all go
 * (docs/realtime.md, A log that started over; the same rule as the caches of what callers send).
 */

export interface RecentAppend {
  at: number;
  bytes: number;
  partition: number;
  /** Whose event it is: the share that pays for it. */
  account: number;
  /** Appends the entry again, as it was first appended; the script's reply. */
  redo(): Promise<[0] | [1 | 2, string, ...unknown[]]>;
}

export interface RecentAppendsLimits {
  /** Longer than any reader's lag: an entry older than this was read by every instance still reading. */
  maxAgeMs: number;
  maxEntries: number;
  maxBytes: number;
  /** 0 to 1: the part of the entries and of the bytes one account may hold. */
  accountShare: number;
}

/** A place in arrival order; `entry` is let go (null) as soon as it is dropped, so a dropped event holds no memory. */
interface Held {
  entry: RecentAppend | null;
}

/** One account's entries in arrival order, from `head` on (those before it are dropped). */
interface Share {
  held: Held[];
  head: number;
  bytes: number;
}

export class RecentAppends {
  /** Every entry in arrival order, for the age and the whole's bounds; one dropped from its share stays as a null place. */
  private order: Held[] = [];
  private head = 0;
  /** Null places from `head` on: compacted away once they outnumber the live ones. */
  private droppedAhead = 0;
  private readonly shares = new Map<number, Share>();
  private count = 0;
  private bytes = 0;
  private readonly shareEntries: number;
  private readonly shareBytes: number;

  constructor(
    private readonly limits: RecentAppendsLimits,
    private readonly now: () => number = Date.now,
  ) {
    const share = Math.min(1, Math.max(0, limits.accountShare));
    this.shareEntries = Math.max(1, Math.floor(limits.maxEntries * share));
    this.shareBytes = Math.floor(limits.maxBytes * share);
  }

  add(entry: RecentAppend): void {
    // One too big for an account's share is not kept: it would empty the share.
    if (entry.bytes > this.shareBytes) return;
    const held: Held = { entry };
    this.order.push(held);
    let share = this.shares.get(entry.account);
    if (!share) this.shares.set(entry.account, (share = { held: [], head: 0, bytes: 0 }));
    share.held.push(held);
    share.bytes += entry.bytes;
    this.count += 1;
    this.bytes += entry.bytes;
    while (share.bytes > this.shareBytes || share.held.length - share.head > this.shareEntries) this.dropOldest(share);
    this.trim();
  }

  /** The entries still within the age, oldest first; taking them empties the buffer (what is appended again comes back through `add`). */
  take(): RecentAppend[] {
    this.trim();
    const taken: RecentAppend[] = [];
    for (let i = this.head; i < this.order.length; i++) if (this.order[i]!.entry) taken.push(this.order[i]!.entry!);
    this.order = [];
    this.head = 0;
    this.droppedAhead = 0;
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

  /** Places held, dropped ones included: stays within about twice the entries kept, whatever went through. */
  get places(): number {
    let places = this.order.length;
    for (const share of this.shares.values()) places += share.held.length;
    return places;
  }

  private trim(): void {
    const oldest = this.now() - this.limits.maxAgeMs;
    while (this.head < this.order.length) {
      const first = this.order[this.head]!;
      if (first.entry) {
        if (first.entry.at >= oldest && this.count <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
        // The oldest of all is also the oldest of its account.
        this.dropOldest(this.shares.get(first.entry.account)!);
      }
      this.head += 1;
      this.droppedAhead -= 1;
    }
    if (this.droppedAhead > 1024 && this.droppedAhead * 2 > this.order.length - this.head) {
      this.order = this.order.slice(this.head).filter((h) => h.entry !== null);
      this.head = 0;
      this.droppedAhead = 0;
    } else if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }

  private dropOldest(share: Share): void {
    const held = share.held[share.head]!;
    const { account, bytes } = held.entry!;
    held.entry = null;
    this.droppedAhead += 1;
    share.head += 1;
    share.bytes -= bytes;
    this.count -= 1;
    this.bytes -= bytes;
    if (share.head === share.held.length) this.shares.delete(account);
    else if (share.head > 1024 && share.head * 2 > share.held.length) {
      share.held.splice(0, share.head);
      share.head = 0;
    }
  }
}
