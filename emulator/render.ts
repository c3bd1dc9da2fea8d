/**
 * The two response styles (EMULATOR_RESPONSE_STYLE):
 * - `enveloped`: `{"v1/transaction": {"klass": "v1/transaction", ...}}`, lists as
 *   `{"v1/transactions": [...], "meta": {...}}`, nested objects with their own `klass`;
 * - `plain`: bare objects, and bare arrays where the spec's table says "Array of".
 */
import type { ResponseStyle } from './options.js';
import type { JsonObject } from './store.js';

export type Kind =
  | 'transaction'
  | 'payout'
  | 'customer'
  | 'phone_number'
  | 'currency'
  | 'webhook'
  | 'event'
  | 'log'
  | 'account'
  | 'payment_intent';

const PLURAL: Record<Kind, string> = {
  transaction: 'transactions',
  payout: 'payouts',
  customer: 'customers',
  phone_number: 'phone_numbers',
  currency: 'currencies',
  webhook: 'webhooks',
  event: 'events',
  log: 'logs',
  account: 'accounts',
  payment_intent: 'payment_intents',
};

export const pluralOf = (kind: Kind): string => PLURAL[kind];

export interface PageMeta {
  current_page: number;
  next_page: number | null;
  prev_page: number | null;
  per_page: number;
  total_pages: number;
  total_count: number;
}

export class Renderer {
  readonly enveloped: boolean;

  constructor(readonly style: ResponseStyle) {
    this.enveloped = style === 'enveloped';
  }

  /** The object itself, with `klass` on it and its nested objects when enveloped. */
  object(kind: Kind, row: object): JsonObject {
    if (!this.enveloped) return row as JsonObject;
    const out: JsonObject = { klass: `v1/${kind}`, ...row };
    if (kind === 'customer' && out.phone_number !== null && typeof out.phone_number === 'object') {
      out.phone_number = { klass: 'v1/phone_number', ...(out.phone_number as JsonObject) };
    }
    return out;
  }

  one(kind: Kind, row: object): unknown {
    return this.enveloped ? { [`v1/${kind}`]: this.object(kind, row) } : row;
  }

  /** Reads whose spec table says "Array of" although they return one object. */
  arrayOfOne(kind: Kind, row: object): unknown {
    return this.enveloped ? this.one(kind, row) : [row];
  }

  many(kind: Kind, rows: readonly object[], meta?: PageMeta): unknown {
    if (!this.enveloped) return rows;
    const body: JsonObject = { [`v1/${PLURAL[kind]}`]: rows.map((r) => this.object(kind, r)) };
    if (meta) body.meta = meta;
    return body;
  }
}
