/**
 * Upstream reads of one object by one key in flight, across operations: a read of the same object by the
 * same key, at the same generation, waits for that answer instead of asking again (docs/performance.md,
 * Polls that coalesce). Never across keys: the key is part of the name.
 */
import type { EntityId } from './store.js';

export interface InFlightBounds {
  /** Reads remembered at once, every key together; past it a read goes on alone. */
  max: number;
  /** One key's share of `max`. */
  perCaller: number;
}

export const DEFAULT_IN_FLIGHT_BOUNDS: InFlightBounds = Object.freeze({ max: 10_000, perCaller: 1_000 });

export interface InFlightReads {
  /** The read in flight for this key and object, when it started at `generation` (no eviction since). */
  join(callerId: string, kind: string, id: EntityId, generation: string | null): Promise<unknown> | undefined;
  /** Remembers `read` until `release` (once its answer is written, so no reader falls between), when the bounds allow. */
  lead(callerId: string, kind: string, id: EntityId, generation: string | null, read: Promise<unknown>): () => void;
  readonly size: number;
}

interface Entry {
  generation: string | null;
  read: Promise<unknown>;
}

export function inFlightReads(bounds: InFlightBounds = DEFAULT_IN_FLIGHT_BOUNDS): InFlightReads {
  const reads = new Map<string, Entry>();
  const perCaller = new Map<string, number>();
  const name = (callerId: string, kind: string, id: EntityId) => `${callerId}\u0000${kind}\u0000${id}`;
  const forget = (callerId: string, key: string, entry: Entry) => {
    if (reads.get(key) !== entry) return;
    reads.delete(key);
    const left = (perCaller.get(callerId) ?? 1) - 1;
    if (left === 0) perCaller.delete(callerId);
    else perCaller.set(callerId, left);
  };
  return {
    join(callerId, kind, id, generation) {
      const entry = reads.get(name(callerId, kind, id));
      return entry && entry.generation === generation ? entry.read : undefined;
    },
    lead(callerId, kind, id, generation, read) {
      const key = name(callerId, kind, id);
      const held = perCaller.get(callerId) ?? 0;
      // A newer read of an object already in flight takes its place: later readers join the newer one.
      const replaces = reads.has(key);
      if (!replaces && (reads.size >= bounds.max || held >= bounds.perCaller)) return () => undefined;
      const entry: Entry = { generation, read };
      reads.set(key, entry);
      if (!replaces) perCaller.set(callerId, held + 1);
      return () => forget(callerId, key, entry);
    },
    get size() {
      return reads.size;
    },
  };
}
