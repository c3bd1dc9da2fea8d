/**
 * Account-wide catch-up for `paymentEvent(after:)`: a subscriber that was
 * away (its connection dropped, the gateway restarted, a webhook was lost
 * meanwhile) names the last event it got; the events after it are read from
 * the upstream's event list, oldest first, then live events follow. Live
 * events are listened to before the list is read, so nothing falls between
 * the two, and an event both listed and delivered live (a late webhook, a
 * redelivery) is emitted once.
 */
import type { Page } from '../upstream/index.js';
import { everyItem } from '../upstream/index.js';
import type { EventModel } from '../upstream/index.js';

/** How far back a subscriber may resume: the upstream's largest page, ten times. */
export const RESUME_MAX_EVENTS = 1000;
const PER_PAGE = 100;

export interface ResumeSpec<T> {
  afterId: number;
  /** One page of the account's events, newest first (the upstream's order). */
  listPage(page: number, perPage: number): Promise<Page<EventModel>>;
  /** The value to emit for a listed event, or null to skip it (the subscriber's type filter). */
  toValue(event: EventModel): T | null;
  idOf(value: T): number;
  /** The error for an `after` older than the newest RESUME_MAX_EVENTS events. */
  tooFarBack(): Error;
}

/** The events after `afterId`, oldest first; throws `tooFarBack()` when they are more than the window holds. */
async function eventsAfter<T>(spec: ResumeSpec<T>): Promise<EventModel[]> {
  // By id: events created while the pages are read push older ones down, so the top of a page can
  // repeat the bottom of the one before; each is replayed once.
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
