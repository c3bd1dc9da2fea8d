/**
 * Re-reads objects subscribers wait on when no webhook came (they get lost), appended to the event log through the
 * same ledger as webhooks. Cost and bounds: docs/realtime.md, Reconciliation.
 */
import type { ReconcileSettings } from '../config.js';
import type { Logger } from '../logger.js';
import { UpstreamAuthenticationError, UpstreamPermissionError } from '../upstream/index.js';
import type { EventBus } from './bus.js';
import { FairQueue } from './fair-queue.js';
import { objectKey, type PaymentEvent } from './events.js';
import type { EventLog } from './log.js';
import type { PollLease } from './poll-lease.js';

export type WatchedKind = 'transaction' | 'payout';

export type Snapshot = Record<string, unknown> & { id: number; status: string; updated_at?: string | null | undefined };

export type SnapshotReader = (apiKey: string, kind: WatchedKind, id: number) => Promise<Snapshot | null>;

export interface WatchTarget {
  accountId: number;
  kind: WatchedKind;
  id: number;
  /** A subscriber still there: never another account's key. */
  apiKey: string;
  isFinal(status: string): boolean;
}

export interface ReconcileStats {
  watched: number;
  owned: number;
  reads: number;
  changes: number;
  deferred: number;
  errors: number;
}

export interface Reconciler {
  watch(target: WatchTarget): () => void;
  observe(accountId: number, kind: WatchedKind, snapshot: Snapshot): Promise<boolean>;
  stats(): ReconcileStats;
  close(): Promise<void>;
}

export interface ReconcilerDeps {
  settings: ReconcileSettings;
  /** Listened to: a change by webhook starts the waits over. */
  bus: EventBus;
  log: EventLog;
  lease: PollLease;
  read: SnapshotReader;
  logger: Logger;
  random?: () => number;
}

interface Watch {
  key: string;
  target: Omit<WatchTarget, 'apiKey'>;
  /** One entry per local subscriber; the oldest one's key does the reads. */
  keys: Map<symbol, string>;
  step: number;
  timer: NodeJS.Timeout | null;
  owned: boolean;
  busy: boolean;
  done: boolean;
}

function toEntity(snapshot: Snapshot): Record<string, unknown> {
  return { ...snapshot };
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { settings, bus, log, lease, logger } = deps;
  const random = deps.random ?? Math.random;
  const enabled = settings.readsPerSecond > 0;
  const watches = new Map<string, Watch>();
  const accounts = new Map<number, { count: number; unsubscribe: () => void }>();
  const counters = { reads: 0, changes: 0, deferred: 0, errors: 0 };
  const bucket = { tokens: Math.max(1, settings.readsPerSecond), at: Date.now() };
  let closed = false;

  const nominal = (step: number) => Math.min(settings.maxMs, settings.initialMs * 2 ** step);
  const jittered = (ms: number) => ms * (1 - settings.jitter * random());

  const takeToken = (): boolean => {
    const now = Date.now();
    const capacity = Math.max(1, settings.readsPerSecond);
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * settings.readsPerSecond);
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };

  const schedule = (w: Watch, ms: number) => {
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    if (closed || w.done || !enabled) return;
    w.timer = setTimeout(() => void tick(w), ms);
    w.timer.unref();
  };

  // One timer hands out tokens as they refill, rather than every deferred object waking to retry.
  const queue = new FairQueue<Watch>();
  let pump: NodeJS.Timeout | null = null;
  const startPump = () => {
    if (pump || closed || queue.size === 0) return;
    const wait = ((1 - bucket.tokens) / settings.readsPerSecond) * 1000;
    pump = setTimeout(() => {
      pump = null;
      while (queue.size > 0) {
        if (queue.peek()!.done) queue.shift();
        else if (takeToken()) void read(queue.shift()!);
        else break;
      }
      startPump();
    }, Math.max(1, wait));
    pump.unref();
  };

  async function publish(accountId: number, kind: WatchedKind, snapshot: Snapshot): Promise<boolean> {
    const ms = Date.parse(snapshot.updated_at ?? '');
    const event: PaymentEvent = {
      id: 0,
      type: `${kind}.${snapshot.status}`,
      object: kind,
      objectId: snapshot.id,
      accountId,
      entity: toEntity(snapshot),
      createdAt: snapshot.updated_at ?? null,
      current: true,
      origin: 'snapshot',
    };
    return log.appendSnapshot(event, Number.isFinite(ms) ? ms : 0);
  }

  const failed = (w: Watch, error: unknown) => {
    counters.errors += 1;
    logger.warn({ err: { message: error instanceof Error ? error.message : String(error) }, object: w.target.kind, id: w.target.id }, 're-read of a watched object failed');
    // A key revoked or narrowed since its holder subscribed: the next re-read uses another subscriber's key.
    if (error instanceof UpstreamAuthenticationError || error instanceof UpstreamPermissionError) {
      const [token, apiKey] = w.keys.entries().next().value ?? [];
      if (token !== undefined && apiKey !== undefined) {
        w.keys.delete(token);
        w.keys.set(token, apiKey);
      }
    }
    w.busy = false;
    schedule(w, jittered(nominal(w.step)));
  };

  /** Only the lease holder reads; the others check again after the same wait, to take over if it dies. */
  async function tick(w: Watch): Promise<void> {
    w.timer = null;
    if (w.busy || w.done || closed) return;
    w.busy = true;
    try {
      // Held past the next wait and a slow read, so a live owner never loses it between two re-reads.
      w.owned = await lease.acquire(w.key, 2 * nominal(w.step) + settings.initialMs);
    } catch (error) {
      failed(w, error);
      return;
    }
    if (!w.owned) {
      // Lease checks back off like re-reads, so Redis sees no more of them than the upstream sees reads.
      w.busy = false;
      w.step += 1;
      schedule(w, jittered(nominal(w.step)));
      return;
    }
    if (queue.size === 0 && takeToken()) return read(w);
    counters.deferred += 1;
    queue.push(w.target.accountId, w);
    startPump();
  }

  async function read(w: Watch): Promise<void> {
    const apiKey = w.keys.values().next().value;
    if (w.done || closed || apiKey === undefined) return;
    try {
      counters.reads += 1;
      const snapshot = await deps.read(apiKey, w.target.kind, w.target.id);
      if (snapshot && (await publish(w.target.accountId, w.target.kind, snapshot))) counters.changes += 1;
      w.busy = false;
      if (snapshot && w.target.isFinal(snapshot.status)) {
        w.done = true;
        return;
      }
      w.step += 1;
      schedule(w, jittered(nominal(w.step)));
    } catch (error) {
      failed(w, error);
    }
  }

  const onEvent = (event: PaymentEvent) => {
    if (!event.current || event.objectId === null || event.object === null) return;
    const w = watches.get(objectKey(event.accountId, event.object, event.objectId));
    if (!w || w.done) return;
    const status = typeof event.entity?.status === 'string' ? event.entity.status : null;
    if (status !== null && w.target.isFinal(status)) {
      w.done = true;
      schedule(w, 0);
      return;
    }
    w.step = 0;
    if (!w.busy) schedule(w, jittered(settings.initialMs));
  };

  function unwatch(w: Watch, token: symbol): void {
    if (!w.keys.delete(token) || w.keys.size > 0) return;
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    w.done = true;
    watches.delete(w.key);
    if (w.owned) lease.release(w.key).catch(() => undefined);
    const account = accounts.get(w.target.accountId);
    if (account && --account.count === 0) {
      account.unsubscribe();
      accounts.delete(w.target.accountId);
    }
  }

  return {
    watch({ apiKey, ...target }) {
      const key = objectKey(target.accountId, target.kind, target.id);
      const token = Symbol(key);
      let w = watches.get(key);
      if (!w) {
        w = { key, target, keys: new Map(), step: 0, timer: null, owned: false, busy: false, done: false };
        watches.set(key, w);
        const account = accounts.get(target.accountId);
        if (account) account.count += 1;
        else accounts.set(target.accountId, { count: 1, unsubscribe: bus.subscribe(target.accountId, onEvent, { internal: true }) });
        schedule(w, jittered(settings.initialMs));
      }
      w.keys.set(token, apiKey);
      const watched = w;
      return () => unwatch(watched, token);
    },
    observe: publish,
    stats: () => ({ watched: watches.size, owned: [...watches.values()].filter((w) => w.owned && !w.done).length, ...counters }),
    async close() {
      closed = true;
      if (pump) clearTimeout(pump);
      queue.clear();
      const owned = [...watches.values()].filter((w) => w.owned);
      for (const w of watches.values()) if (w.timer) clearTimeout(w.timer);
      watches.clear();
      for (const account of accounts.values()) account.unsubscribe();
      accounts.clear();
      await Promise.allSettled(owned.map((w) => lease.release(w.key)));
    },
  };
}
