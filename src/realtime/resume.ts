/** Catch-up for `paymentEvent(after:)` (docs/realtime.md, Account-wide events): live events are heard before the list is read. */
import type { Page } from '../upstream/index.js';
import { everyItem } from '../upstream/index.js';
import type { EventModel } from '../upstream/index.js';

/** The upstream's largest page, ten times. */
export const RESUME_MAX_EVENTS = 1000;
const PER_PAGE = 100;

export interface ResumeSpec<T> {
  afterId: number;
  /** Newest first (the upstream's order). */
  listPage(page: number, perPage: number): Promise<Page<EventModel>>;
  toValue(event: EventModel): T | null;
  idOf(value: T): number;
  tooFarBack(): Error;
}

async function eventsAfter<T>(spec: ResumeSpec<T>): Promise<EventModel[]> {
  // By id: rows pushed down by new events repeat across pages.
  const found = new Map<number, EventModel>();
  for (let page = 1; ; page += 1) {
    const listed = await spec.listPage(page, PER_PAGE);
    const { meta } = listed;
    // All or nothing: a replay that silently skipped a malformed event would lose it for good.
    const items = everyItem(listed.items);
    for (const e of items) if (e.id > spec.afterId) found.set(e.id, e);
    const reached = items.some((e) => e.id <= spec.afterId);
    const more = meta ? meta.nextPage !== null : items.length === PER_PAGE;
    if (reached || !more) break;
    if (found.size >= RESUME_MAX_EVENTS) throw spec.tooFarBack();
  }
  if (found.size > RESUME_MAX_EVENTS) throw spec.tooFarBack();
  return [...found.values()].sort((a, b) => a.id - b.id);
}

export async function resumeAfter<T>(live: AsyncIterableIterator<T>, spec: ResumeSpec<T>): Promise<AsyncIterableIterator<T>> {
  let listed: EventModel[];
  try {
    listed = await eventsAfter(spec);
  } catch (error) {
    await live.return?.();
    throw error;
  }
  const replay = listed.map((e) => spec.toValue(e)).filter((v): v is T => v !== null);
  const replayed = new Set(listed.map((e) => e.id));

  const stream: AsyncIterableIterator<T> = {
    async next() {
      const value = replay.shift();
      if (value !== undefined) return { value, done: false };
      for (;;) {
        const result = await live.next();
        if (result.done || !replayed.has(spec.idOf(result.value))) return result;
      }
    },
    async return() {
      replay.length = 0;
      return (await live.return?.()) ?? { value: undefined, done: true };
    },
    async throw(error?: unknown) {
      replay.length = 0;
      await live.return?.();
      throw error instanceof Error ? error : new Error(String(error));
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
