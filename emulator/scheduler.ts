/**
 * Every timer of the emulator goes through here, so that `stop()` and
 * `reset()` can clear them all and the process can exit.
 */
const MAX_DELAY = 2_147_483_647;

export interface TimerHandle {
  cancelled: boolean;
  timeout: NodeJS.Timeout | undefined;
}

export class Scheduler {
  private readonly live = new Set<TimerHandle>();

  /** Runs `fn` after `ms`; delays beyond setTimeout's limit are chained. */
  after(ms: number, fn: () => void): TimerHandle {
    const handle: TimerHandle = { cancelled: false, timeout: undefined };
    const due = Date.now() + Math.max(0, ms);
    const arm = (): void => {
      const wait = Math.min(MAX_DELAY, Math.max(0, due - Date.now()));
      handle.timeout = setTimeout(() => {
        if (handle.cancelled) return;
        if (Date.now() < due) return arm();
        this.live.delete(handle);
        fn();
      }, wait);
      handle.timeout.unref();
    };
    this.live.add(handle);
    arm();
    return handle;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  cancel(handle: TimerHandle | undefined): void {
    if (!handle) return;
    handle.cancelled = true;
    if (handle.timeout) clearTimeout(handle.timeout);
    this.live.delete(handle);
  }

  clear(): void {
    for (const handle of this.live) {
      handle.cancelled = true;
      if (handle.timeout) clearTimeout(handle.timeout);
    }
    this.live.clear();
  }

  get size(): number {
    return this.live.size;
  }
}
