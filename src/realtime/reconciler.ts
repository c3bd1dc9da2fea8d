/**
 * Reconciliation: while subscriptions wait on an object that is not final,
 * re-read it from the upstream when no change came for a while, because a
 * webhook can be lost (gateway restarting, endpoint disabled upstream,
 * secret rotated wrongly) and the upstream's own advice is to read the
 * object. A re-read that finds a newer state is published on the event bus
 * like a webhook, through the same ledger, so each subscriber sees each
 * state once and never an older one after a newer one.
 *
 * Cost: one re-read per object per wait, whatever the number of its
 * subscribers on this instance, and across instances (poll-lease.ts);
 * waits double from `initialMs` to `maxMs` while nothing changes and start
 * over after a change; every re-read of the instance takes a token from one
 * bucket of `readsPerSecond`, and over that cap the due re-reads take turns
 * by account (fair-queue.ts), so one tenant's many watched objects do not
 * hold back another tenant's.
 */
import type { ReconcileSettings } from '../config.js';
import type { Logger } from '../logger.js';
import { UpstreamAuthenticationError, UpstreamPermissionError } from '../upstream/index.js';
import type { EventBus } from './bus.js';
import { FairQueue } from './fair-queue.js';
import { objectKey, type PaymentEvent } from './events.js';
import type { DeliveryLedger } from './ledger.js';
import type { PollLease } from './poll-lease.js';

export type WatchedKind = 'transaction' | 'payout';

/** An object as the upstream client decodes it: what the gateway needs of it to order and end. */
export type Snapshot = Record<string, unknown> & { id: number; status: string; updated_at?: string | null | undefined };

/** Reads one object with a subscriber's own key; null when the upstream does not know it. */
export type SnapshotReader = (apiKey: string, kind: WatchedKind, id: number) => Promise<Snapshot | null>;

export interface WatchTarget {
  accountId: number;
  kind: WatchedKind;
  id: number;
  /** The subscriber's key: re-reads are made with the key of a subscriber still there, never another account's. */
  apiKey: string;
  /** A status after which the upstream never changes the object: re-reading stops. */
  isFinal(status: string): boolean;
}

export interface ReconcileStats {
  /** Objects with at least one subscriber on this instance. */
  watched: number;
  /** Of those, the ones this instance re-reads (holds the lease of). */
  owned: number;
  /** Upstream re-reads made by this instance since start. */
  reads: number;
  /** Re-reads that found a state no webhook had brought, published to subscribers. */
  changes: number;
  /** Re-reads put off because the instance's rate cap was reached. */
  deferred: number;
  /** Re-reads or lease checks that failed (retried at the next wait). */
  errors: number;
}

export interface Reconciler {
  /** Keeps the object re-read while the returned function is not called. */
  watch(target: WatchTarget): () => void;
  /** Publishes a snapshot read elsewhere (a subscriber's current state) if it is newer than any seen. */
  observe(accountId: number, kind: WatchedKind, snapshot: Snapshot): Promise<boolean>;
  stats(): ReconcileStats;
  close(): Promise<void>;
}

export interface ReconcilerDeps {
  settings: ReconcileSettings;
  bus: EventBus;
  ledger: DeliveryLedger;
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

/**
 * A re-read object as an event's entity: a copy, amounts left as the decoder's
 * `Decimal`s, as a webhook entity read exactly holds them (events.ts); the
 * models take them as they are, and the Redis bus carries them (upstream/codec.ts).
 */
function toEntity(snapshot: Snapshot): Record<string, unknown> {
  return { ...snapshot };
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { settings, bus, ledger, lease, logger } = deps;
  const random = deps.random ?? Math.random;
  const enabled = settings.readsPerSecond > 0;
  const watches = new Map<string, Watch>();
  const accounts = new Map<number, { count: number; unsubscribe: () => void }>();
  const counters = { reads: 0, changes: 0, deferred: 0, errors: 0 };
  const bucket = { tokens: Math.max(1, settings.readsPerSecond), at: Date.now() };
  let closed = false;

  const nominal = (step: number) => Math.min(settings.maxMs, settings.initialMs * 2 ** step);
  const jittered = (ms: number) => ms * (1 - settings.jitter * random());

  /** True when a read may start now (a token was taken). */
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

  // Over the cap, objects wait their turn (round-robin between accounts), and one timer
  // hands out tokens as they refill, rather than every deferred object waking to retry.
  const queue = new FairQueue<Watch>();
  let pump: NodeJS.Timeout | null = null;
  const startPump = () => {
    if (pump || closed || queue.size === 0) return;
    const wait = ((1 - bucket.tokens) / settings.readsPerSecond) * 1000;
    pump = setTimeout(() => {
      pump = null;
      while (queue.size > 0) {
        // Objects no one waits on any more give their turn away without spending a token.
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
    if (!(await ledger.advanceTo(objectKey(accountId, kind, snapshot.id), Number.isFinite(ms) ? ms : 0))) return false;
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
    await bus.publish(event);
    return true;
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

  /** Lease first: only its holder reads; the others check again after the same wait, to take over if it dies. */
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

  /** Any newer state of a watched object, webhook or re-read: the object moved, so the waits start over. */
  const onEvent = (event: PaymentEvent) => {
    if (!event.current || event.objectId === null || event.object === null) return;
    const w = watches.get(objectKey(event.accountId, event.object, event.objectId));
    if (!w || w.done) return;
    const status = typeof event.entity?.status === 'string' ? event.entity.status : null;
    if (status !== null && w.target.isFinal(status)) {
      w.done = true;
      // Done: schedule only clears the pending re-read.
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
