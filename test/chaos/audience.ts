/**
 * The subscribers of one fault, on every gateway: one subscription per transaction (with an id), one without an
 * id, and `paymentEvent` for approvals. A gateway killed and restarted loses its sockets: its subscribers come
 * back as a client would, each with an id anew (its current state first), `paymentEvent` resuming `after` the last
 * event it got; the one without an id cannot catch up (docs/realtime.md, what can be missed) and is not counted.
 */
import type { Client } from 'graphql-ws';
import type { RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { eventually, liveSubscriptions, setUpstreamStatus, subscribe, wsClient, type Subscription } from '../realtime/support.js';
import type { Gateway } from './world.js';

const BY_ID = `subscription ($id: ID) { transactionUpdated(id: $id) { id status } }`;
const EVENTS = `subscription ($after: ID) { paymentEvent(types: ["transaction.approved"], after: $after) { id objectId } }`;

type Updated = { transactionUpdated: { id: string; status: string } };
type Event = { paymentEvent: { id: string; objectId: string | null } };

/** For one subscriber: of the approved transactions, how many it saw, missed, and saw more than once. */
export interface Count {
  approved: number;
  seen: number;
  lost: number;
  twice: number;
  /** Which approvals were lost, by their order (1 is the first made): those around the fault's moment, or not. */
  lostAt?: number[];
}

/** A gateway takes at most 100 operations per connection (src/server/streams.ts). */
const PER_CONNECTION = 90;

interface Listeners {
  clients: Client[];
  /** Per transaction, one subscription per life of the gateway. */
  byId: Map<number, Subscription<Updated>[]>;
  withoutId: Subscription<Updated> | null;
  events: Subscription<Event>[];
}

export interface Audience {
  key: string;
  transactions: number[];
  /** Moves a transaction to approved upstream: the emulator's event is then webhooked to the gateways. */
  approve(id: number): Promise<void>;
  /** Its subscribers come back on the restarted gateway. */
  reopen(gateway: Gateway): Promise<void>;
  tally(approved: readonly number[]): Record<string, Count>;
  close(): Promise<void>;
}

export async function openAudience(emulator: RunningEmulator, key: string, gateways: Gateway[], count: number): Promise<Audience> {
  const f = factories(emulator, key);
  const transactions = (await Promise.all(Array.from({ length: count }, () => f.transaction({ description: 'chaos approval' })))).map((t) => t.id);
  // What paymentEvent resumes after when it got nothing before its gateway died: the account's newest event now.
  const newest = (await f.rest('GET', '/v1/events?per_page=1')) as { 'v1/events': { id: number }[] };
  const firstAfter = String(newest['v1/events'][0]?.id ?? 0);
  const listeners = new Map<string, Listeners>();

  const listen = async (gateway: Gateway, previous?: Listeners): Promise<Listeners> => {
    const clients: Client[] = [];
    for (let n = 0; n < Math.ceil((transactions.length + 2) / PER_CONNECTION); n++) {
      const { client, connected } = wsClient(gateway.wsUrl, key);
      await connected;
      clients.push(client);
    }
    const client = clients[0]!;
    const before = await liveSubscriptions(gateway.wsUrl);
    const byId = previous?.byId ?? new Map<number, Subscription<Updated>[]>();
    const opened: Subscription<Updated>[] = [];
    for (const [i, id] of transactions.entries()) {
      const sub = subscribe<Updated>(clients[Math.floor((i + 2) / PER_CONNECTION)]!, BY_ID, { id: String(id) });
      opened.push(sub);
      byId.set(id, [...(byId.get(id) ?? []), sub]);
    }
    const withoutId = previous ? null : subscribe<Updated>(client, BY_ID);
    const got = previous?.events.flatMap((s) => s.values.map((v) => Number(v.paymentEvent.id))) ?? [];
    const after = got.length > 0 ? String(Math.max(...got)) : firstAfter;
    const events = [...(previous?.events ?? []), subscribe<Event>(client, EVENTS, { after })];
    const expected = before + transactions.length + 1 + (withoutId ? 1 : 0);
    await eventually(() => liveSubscriptions(gateway.wsUrl), (n) => n >= expected, 30_000);
    // Each subscription with an id has its current state first: then it is listening.
    await Promise.all(opened.map((s) => s.nth(1, 30_000)));
    return { clients, byId, withoutId, events };
  };
  for (const gateway of gateways) listeners.set(gateway.name, await listen(gateway));

  return {
    key,
    transactions,
    approve: (id) => setUpstreamStatus(emulator.url, 'transactions', id, 'approved'),
    async reopen(gateway) {
      const previous = listeners.get(gateway.name)!;
      await Promise.all(previous.clients.map((c) => c.dispose()));
      listeners.set(gateway.name, await listen(gateway, previous));
    },
    tally(approved) {
      const counts: Record<string, Count> = {};
      const count = (times: (id: number) => number, twice: (id: number) => boolean): Count => {
        const lostAt = approved.flatMap((id, i) => (times(id) === 0 ? [i + 1] : []));
        return {
          approved: approved.length,
          seen: approved.length - lostAt.length,
          lost: lostAt.length,
          twice: approved.filter(twice).length,
          ...(lostAt.length > 0 ? { lostAt } : {}),
        };
      };
      const approvals = (sub: Subscription<Updated>, id?: number) =>
        sub.values.filter((v) => v.transactionUpdated.status === 'APPROVED' && (id === undefined || v.transactionUpdated.id === String(id))).length;
      for (const [name, l] of listeners) {
        // With an id, each life of the subscription starts from the current state: once per life at most.
        const lives = (id: number) => l.byId.get(id) ?? [];
        counts[`${name}, with an id`] = count(
          (id) => lives(id).reduce((n, sub) => n + approvals(sub), 0),
          (id) => lives(id).some((sub) => approvals(sub) > 1),
        );
        const withoutId = l.withoutId;
        if (withoutId) counts[`${name}, without an id`] = count((id) => approvals(withoutId, id), (id) => approvals(withoutId, id) > 1);
        // paymentEvent resumed after its last event: once in all its lives together.
        const events = (id: number) => l.events.reduce((n, sub) => n + sub.values.filter((v) => v.paymentEvent.objectId === String(id)).length, 0);
        counts[`${name}, paymentEvent`] = count(events, (id) => events(id) > 1);
      }
      return counts;
    },
    async close() {
      await Promise.all([...listeners.values()].flatMap((l) => l.clients.map((c) => c.dispose())));
    },
  };
}
