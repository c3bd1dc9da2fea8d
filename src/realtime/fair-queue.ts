/**
 * The reconciler's due re-reads, one line per account, served round-robin:
 * an account watching hundreds of objects waits behind itself, and another
 * account's object gets the next turn, not the place after all of them.
 */
export class FairQueue<T> {
  /** Items per account in arrival order; the map's order is the turn. */
  private readonly byAccount = new Map<number, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(accountId: number, item: T): void {
    const line = this.byAccount.get(accountId);
    if (line) line.push(item);
    else this.byAccount.set(accountId, [item]);
    this.count += 1;
  }

  /** The item whose turn it is, left in place. */
  peek(): T | undefined {
    return this.byAccount.values().next().value?.[0];
  }

  /** Takes the item whose turn it is; its account goes to the back of the turn. */
  shift(): T | undefined {
    const first = this.byAccount.entries().next();
    if (first.done) return undefined;
    const [accountId, line] = first.value;
    const item = line.shift();
    this.byAccount.delete(accountId);
    if (line.length > 0) this.byAccount.set(accountId, line);
    this.count -= 1;
    return item;
  }

  clear(): void {
    this.byAccount.clear();
    this.count = 0;
  }
}
