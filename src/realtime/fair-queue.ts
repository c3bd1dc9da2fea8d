/** Due re-reads, round-robin by account: an account watching hundreds of objects waits behind itself, not others. */
export class FairQueue<T> {
  /** The map's order is the turn. */
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

  peek(): T | undefined {
    return this.byAccount.values().next().value?.[0];
  }

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
