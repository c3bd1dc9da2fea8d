/**
 * The status history of a transaction or payout, rebuilt from its `*_at`
 * timestamps and its events: the upstream has no history endpoint.
 */
import type { EventModel } from '../upstream/index.js';

export interface TimelineEntry {
  status: string;
  at: string | null;
  event: EventModel | null;
}

type Kind = 'transaction' | 'payout';

/** Statuses that stamp a timestamp of the object when reached. */
const STAMPED: Record<Kind, Readonly<Record<string, string>>> = {
  transaction: {
    approved: 'approved_at',
    declined: 'declined_at',
    canceled: 'canceled_at',
    refunded: 'refunded_at',
    transferred: 'transferred_at',
  },
  payout: { started: 'started_at', sent: 'sent_at', failed: 'failed_at' },
};

/** Event suffixes that are not status changes. */
const NOT_A_STATUS = new Set(['created', 'updated', 'deleted']);

type Stamped = { status: string; created_at?: string | null; updated_at?: string | null } & Record<string, unknown>;

export function buildTimeline(kind: Kind, object: Stamped, events: readonly EventModel[]): TimelineEntry[] {
  const prefix = `${kind}.`;
  const own = events
    .filter((e) => e.type.startsWith(prefix))
    .sort((a, b) => compareTimes(a.created_at ?? null, b.created_at ?? null) || a.id - b.id);
  const created = own.find((e) => e.type === `${kind}.created`) ?? null;
  const entries: TimelineEntry[] = [{ status: 'pending', at: object.created_at ?? created?.created_at ?? null, event: created }];
  for (const event of own) {
    const status = event.type.slice(prefix.length);
    if (!NOT_A_STATUS.has(status)) entries.push({ status, at: event.created_at ?? null, event });
  }
  // A status the object stamped but no event recorded (events can be missing or paged out).
  for (const [status, field] of Object.entries(STAMPED[kind])) {
    const at = object[field];
    if (typeof at === 'string' && !entries.some((e) => e.status === status)) entries.push({ status, at, event: null });
  }
  const current = object.status.toLowerCase();
  if (entries[entries.length - 1]?.status !== current && !entries.some((e) => e.status === current)) {
    entries.push({ status: current, at: object.updated_at ?? null, event: null });
  }
  const [first, ...rest] = entries;
  return first ? [first, ...rest.sort((a, b) => compareTimes(a.at, b.at))] : [];
}

/** An unknown time sorts last; the sort is stable, so ties keep their order. */
function compareTimes(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return Date.parse(a) - Date.parse(b);
}
