/**
 * Pending objects frontends keep polling, re-read in the background at the reconciler's pace while polls
 * last, so a lost webhook is caught without a subscriber; and the re-read that finds an object changed
 * evicts it before it is published (docs/performance.md, Pending objects under webhook control).
 */
import type { Logger } from '../logger.js';
import type { PayoutModel, TransactionModel } from '../upstream/index.js';
import { finalTests, type PendingKind } from './index.js';

/** What the reconciler needs to re-read an object: its `watch` takes this and returns the unwatch. */
export interface PolledTarget {
  accountId: number;
  kind: PendingKind;
  id: number;
  /** The poller's own key: a re-read is that key's read, made later. */
  apiKey: string;
  isFinal(status: string): boolean;
}

export type WatchFn = (target: PolledTarget) => () => void;

export interface PollWatchBounds {
  /** Polled objects watched at once, every key together; past it a poll is served within the max age alone. */
  max: number;
  perCaller: number;
  /** A watch with no poll for this long ends: the page that polled it has gone. */
  idleMs: number;
}

export const DEFAULT_POLL_WATCH_BOUNDS: PollWatchBounds = Object.freeze({ max: 10_000, perCaller: 1_000, idleMs: 20_000 });

type Snapshot = { id: number; status: string; updated_at?: string | null | undefined; account_id?: number | null | undefined };

export interface PollWatches {
  /** One poll of a pending object by a key (its hash and the key itself). */
  polled(callerId: string, apiKey: string, kind: PendingKind, value: TransactionModel | PayoutModel): void;
  /** A background re-read's answer: awaited before it is published, it evicts the object unless polls saw it so. */
  reread(kind: string, id: number, snapshot: Snapshot | null): Promise<void>;
  /** The reconciler, once it exists; polls before it are served within the max age alone. */
  start(watch: WatchFn): void;
  stats(): { watched: number };
  close(): void;
}

export interface PollWatchDeps {
  evict(kind: string, id: number): Promise<void>;
  logger: Logger;
  bounds?: PollWatchBounds;
  now?: () => number;
}

interface Watch {
  unwatch: () => void;
  lastPoll: number;
  timer: NodeJS.Timeout;
}

interface Polled {
  /** What the polls last saw: a re-read that finds the same is no change. */
  version: string;
  watches: Map<string, Watch>;
}

const versionOf = (s: Snapshot) => `${s.status}\u0000${s.updated_at ?? ''}`;

export function createPollWatches(deps: PollWatchDeps): PollWatches {
  const bounds = deps.bounds ?? DEFAULT_POLL_WATCH_BOUNDS;
  const now = deps.now ?? Date.now;
  const final = finalTests();
  const objects = new Map<string, Polled>();
  const perCaller = new Map<string, number>();
  let watchFn: WatchFn | null = null;
  let count = 0;
  let closed = false;
  const ref = (kind: string, id: number) => `${kind}:${id}`;

  const end = (key: string, polled: Polled, callerId: string, watch: Watch) => {
    clearTimeout(watch.timer);
    watch.unwatch();
    polled.watches.delete(callerId);
    if (polled.watches.size === 0) objects.delete(key);
    count -= 1;
    const left = (perCaller.get(callerId) ?? 1) - 1;
    if (left === 0) perCaller.delete(callerId);
    else perCaller.set(callerId, left);
  };

  const expireLater = (key: string, polled: Polled, callerId: string, watch: Watch, ms: number): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      const idle = now() - watch.lastPoll;
      if (idle >= bounds.idleMs) end(key, polled, callerId, watch);
      else watch.timer = expireLater(key, polled, callerId, watch, bounds.idleMs - idle);
    }, ms);
    timer.unref();
    return timer;
  };

  return {
    polled(callerId, apiKey, kind, value) {
      if (closed) return;
      const key = ref(kind, value.id);
      let polled = objects.get(key);
      if (polled) polled.version = versionOf(value);
      const watch = polled?.watches.get(callerId);
      if (watch) {
        watch.lastPoll = now();
        return;
      }
      const accountId = value.account_id;
      // The reconciler publishes under the object's account; an upstream that does not name it is left to the max age.
      if (!watchFn || typeof accountId !== 'number') return;
      const held = perCaller.get(callerId) ?? 0;
      if (count >= bounds.max || held >= bounds.perCaller) return;
      const isFinal = final[kind];
      const unwatch = watchFn({ accountId, kind, id: value.id, apiKey, isFinal });
      if (!polled) objects.set(key, (polled = { version: versionOf(value), watches: new Map() }));
      const entry: Watch = { unwatch, lastPoll: now(), timer: undefined as unknown as NodeJS.Timeout };
      entry.timer = expireLater(key, polled, callerId, entry, bounds.idleMs);
      polled.watches.set(callerId, entry);
      count += 1;
      perCaller.set(callerId, held + 1);
    },
    async reread(kind, id, snapshot) {
      const polled = objects.get(ref(kind, id));
      // Not polled here (a subscriber's watch, or polls on another instance): evicting is never wrong.
      if (polled && snapshot && polled.version === versionOf(snapshot)) return;
      if (polled && snapshot) polled.version = versionOf(snapshot);
      try {
        await deps.evict(kind, id);
      } catch (error) {
        // The store is failing: its reads miss too, so nothing stale is served from it.
        deps.logger.warn({ err: { message: error instanceof Error ? error.message : String(error) }, object: kind, id }, 'entity cache eviction after a re-read failed');
      }
    },
    start(watch) {
      watchFn = watch;
    },
    stats: () => ({ watched: count }),
    close() {
      closed = true;
      for (const [key, polled] of objects) for (const [callerId, watch] of polled.watches) end(key, polled, callerId, watch);
    },
  };
}
