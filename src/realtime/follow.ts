/**
 * One object's states for one subscriber: the current state first, then
 * each newer state, from webhooks or re-reads (reconciler.ts), then the end
 * of the stream after a final state. The bus is listened to before the
 * current state is read, so a change landing between the two is not lost;
 * whatever is not strictly newer than what this subscriber last got (a
 * re-published current state, an event older than the read) is skipped.
 */
import type { RealtimeSource } from './source.js';
import type { Snapshot, WatchedKind } from './reconciler.js';

export interface FollowSpec<T extends Snapshot, R> {
  kind: WatchedKind;
  id: number;
  /** The state now, with the caller's key; null when the key cannot read it. */
  read(): Promise<T | null>;
  /** A webhook or re-read entity as the object's model, or null when it does not parse. */
  parse(entity: unknown): T | null;
  isFinal(status: string): boolean;
  wrap(value: T): R;
}

interface Seen {
  ms: number;
  status: string;
}

const seen = (value: Snapshot): Seen => {
  const ms = Date.parse(value.updated_at ?? '');
  return { ms: Number.isFinite(ms) ? ms : 0, status: value.status };
};

/** Strictly later, or the same instant with another status (the ledger already ordered those by event id). */
const isNews = (value: Seen, last: Seen) => value.ms > last.ms || (value.ms === last.ms && value.status !== last.status);

/** Null when the object does not exist for the caller's key. */
export async function followObject<T extends Snapshot, R>(source: RealtimeSource, spec: FollowSpec<T, R>): Promise<AsyncIterableIterator<R> | null> {
  const inner = source.events((event) =>
    event.current && event.object === spec.kind && event.objectId === spec.id ? spec.parse(event.entity) : null,
  );
  let current: T | null;
  try {
    current = await spec.read();
  } catch (error) {
    await inner.return?.();
    throw error;
  }
  if (!current) {
    await inner.return?.();
    return null;
  }

  let last = seen(current);
  let first: T | null = current;
  let ended = false;
  const release = spec.isFinal(current.status) ? () => undefined : source.reconcile(spec.kind, current, spec.isFinal);
  const end = () => {
    if (ended) return;
    ended = true;
    release();
    void inner.return?.();
  };
  const done = (): IteratorResult<R> => ({ value: undefined, done: true });
  /** Hands a state out; after a final one the stream ends at the next pull. */
  const emit = (value: T): IteratorResult<R> => {
    if (spec.isFinal(value.status)) end();
    return { value: spec.wrap(value), done: false };
  };

  const stream: AsyncIterableIterator<R> = {
    async next() {
      if (first) {
        const value = first;
        first = null;
        return emit(value);
      }
      while (!ended) {
        const result = await inner.next();
        if (result.done) {
          end();
          break;
        }
        const version = seen(result.value);
        if (!isNews(version, last)) continue;
        last = version;
        return emit(result.value);
      }
      return done();
    },
    async return() {
      end();
      return done();
    },
    async throw(error?: unknown) {
      end();
      throw error instanceof Error ? error : new Error(String(error));
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
