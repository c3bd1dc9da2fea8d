/**
 * Faults on demand, per route key (`GET /v1/customers/:id`) or `*`: added
 * latency, a status code (with an optional body, and `Retry-After` for 429), a
 * reset connection, a hang, or a malformed 200. `times` limits a fault to the
 * next n matching requests; `probability` applies it to a share of them.
 * The first matching fault wins; an exhausted fault disappears.
 */
import type { FaultSpec } from './options.js';

export interface Fault extends FaultSpec {
  id: number;
  /** Matching requests still to hit; null = unlimited. */
  remaining: number | null;
  hits: number;
}

export class Faults {
  private list: Fault[] = [];
  private nextId = 1;

  add(spec: FaultSpec): Fault {
    const fault: Fault = { ...spec, id: this.nextId++, remaining: spec.times ?? null, hits: 0 };
    this.list.push(fault);
    return fault;
  }

  remove(id: number): boolean {
    const before = this.list.length;
    this.list = this.list.filter((f) => f.id !== id);
    return this.list.length !== before;
  }

  clear(): void {
    this.list = [];
  }

  all(): readonly Fault[] {
    return this.list;
  }

  /** The fault to apply to this request, consuming one of its `times`. */
  pick(routeKey: string): Fault | undefined {
    if (this.list.length === 0) return undefined;
    for (const fault of this.list) {
      if (fault.route !== '*' && fault.route !== routeKey) continue;
      if (fault.probability !== undefined && Math.random() >= fault.probability) continue;
      fault.hits++;
      if (fault.remaining !== null) {
        fault.remaining--;
        if (fault.remaining <= 0) this.remove(fault.id);
      }
      return fault;
    }
    return undefined;
  }
}

const SINGULAR: Record<string, string> = {
  transactions: 'transaction',
  payouts: 'payout',
  customers: 'customer',
  currencies: 'currency',
  webhooks: 'webhook',
  events: 'event',
  logs: 'log',
  accounts: 'account',
};

/**
 * A 200 body that parses as JSON but is not a valid resource: the right envelope
 * key with a string id (`{"v1/customer": {"id": "oops"}}`), or for list-shaped
 * routes the plural key holding an object instead of an array.
 */
export function malformedBody(routeKey: string): unknown {
  const [, path = ''] = routeKey.split(' ');
  const parts = path.split('/').filter(Boolean);
  const resource = parts[1] ?? 'object';
  const singular = SINGULAR[resource] ?? resource;
  const last = parts[parts.length - 1] ?? '';
  const listy = parts.length === 2 || ['search', 'start', ':mode'].includes(last) || resource === ':mode';
  if (last === 'token') return { token: 42, url: null };
  if (listy) return { [`v1/${resource === ':mode' ? 'payment_intents' : resource}`]: { id: 'oops' }, meta: 'oops' };
  return { [`v1/${singular}`]: { id: 'oops', amount: 'lots', status: 17 } };
}
