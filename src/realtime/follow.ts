/**
 * One object's states for one subscriber (docs/realtime.md, Current state first). The bus is listened to before the
 * current state is read, so a change between the two is not lost; anything not strictly newer is skipped.
 */
import type { RealtimeSource } from './source.js';
import type { Snapshot, WatchedKind } from './reconciler.js';

export interface FollowSpec<T extends Snapshot, R> {
  kind: WatchedKind;
  id: number;
  /** Null when the caller's key cannot read it. */
  read(): Promise<T | null>;
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

/** The same instant with another status counts: the ledger already ordered those by event id. */
const isNews = (value: Seen, last: Seen) => value.ms > last.ms || (value.ms === last.ms && value.status !== last.status);

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
