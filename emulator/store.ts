/**
 * In-memory rows, stored in their wire shape (snake_case, `null` for unset) so
 * that rendering is a spread and a JSON.stringify. Every row belongs to one
 * account; a lookup with another account's id finds nothing (404).
 */
export type JsonObject = Record<string, unknown>;

export interface Row {
  id: number;
  account_id: number;
}

export interface AccountRow {
  id: number;
  name: string;
  /** From the key's prefix: a live key is a live account (only in a live rehearsal). */
  environment: 'sandbox' | 'live';
  balance_id: number;
  created_at: string;
  updated_at: string;
}

/** What the operator charged and moved, and when the row was written: shared by transactions and payouts. */
interface ChargedRow extends Row {
  commission: number;
  fees: number;
  fixed_commission: number;
  amount_transferred: number;
  amount_debited: number;
  created_at: string;
  updated_at: string;
}

export interface TransactionRow extends ChargedRow {
  reference: string;
  amount: number;
  description: string | null;
  callback_url: string | null;
  status: string;
  customer_id: number | null;
  currency_id: number;
  mode: string | null;
  metadata: JsonObject;
  approved_at: string | null;
  canceled_at: string | null;
  declined_at: string | null;
  refunded_at: string | null;
  transferred_at: string | null;
  deleted_at: string | null;
  last_error_code: string | null;
  custom_metadata: JsonObject;
  receipt_url: string | null;
  payment_method_id: number | null;
  sub_accounts_commissions: unknown[];
  transaction_key: string;
  merchant_reference: string | null;
  balance_id: number;
}

export interface PayoutRow extends ChargedRow {
  reference: string;
  amount: number;
  status: string;
  customer_id: number | null;
  currency_id: number;
  mode: string | null;
  last_error_code: string | null;
  scheduled_at: string | null;
  started_at: string | null;
  sent_at: string | null;
  failed_at: string | null;
  deleted_at: string | null;
  metadata: JsonObject;
  custom_metadata: JsonObject;
  payment_method_id: number | null;
  transaction_key: string;
  merchant_reference: string | null;
  balance_id: number;
}

export interface PhoneNumberRow extends Row {
  number: string;
  country: string;
  created_at: string;
  updated_at: string;
}

export interface CustomerRow extends Row {
  firstname: string;
  lastname: string;
  full_name: string;
  email: string;
  phone_number_id: number | null;
  phone_number: PhoneNumberRow | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface CurrencyRow extends Row {
  name: string;
  iso: string;
  code: number;
  prefix: string | null;
  suffix: string | null;
  div: number;
  modes: string[];
  default: boolean;
  created_at: string;
  updated_at: string;
}

export interface WebhookRow extends Row {
  url: string;
  enabled: boolean;
  ssl_verify: boolean;
  disable_on_error: boolean;
  http_headers: boolean;
  created_at: string;
  updated_at: string;
}

export interface EventRow extends Row {
  type: string;
  /** `transaction`, `payout`, `customer`: the kind of `entity`. */
  object: string;
  entity: JsonObject;
  object_id: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface LogRow extends Row {
  method: string;
  url: string;
  status: number;
  ip_address: string;
  version: string;
  source: string;
  query: string;
  body: string;
  response: string;
  created_at: string;
  updated_at: string;
}

/** Rows of one kind: a global id index and a per-account list in creation (= id) order. */
export class Table<T extends Row> {
  private readonly byId = new Map<number, T>();
  private readonly byAccount = new Map<number, T[]>();

  insert(row: T): T {
    this.byId.set(row.id, row);
    const list = this.byAccount.get(row.account_id);
    if (list) list.push(row);
    else this.byAccount.set(row.account_id, [row]);
    return row;
  }

  /** The row by id, whatever its account (the admin API only). */
  get(id: number): T | undefined {
    return this.byId.get(id);
  }

  /** The row when it exists and belongs to the account. */
  find(accountId: number, id: number): T | undefined {
    const row = this.byId.get(id);
    return row !== undefined && row.account_id === accountId ? row : undefined;
  }

  /** Every account's rows (the admin API only). */
  everyRow(): IterableIterator<T> {
    return this.byId.values();
  }

  /** Oldest first. */
  all(accountId: number): readonly T[] {
    return this.byAccount.get(accountId) ?? [];
  }

  remove(row: T): void {
    this.byId.delete(row.id);
    const list = this.byAccount.get(row.account_id);
    if (!list) return;
    const i = list.indexOf(row);
    if (i >= 0) list.splice(i, 1);
  }

  /** Keep the newest `max` rows of the account; drops in batches so it stays amortised O(1). */
  trim(accountId: number, max: number): void {
    const list = this.byAccount.get(accountId);
    if (!list || list.length <= max + Math.ceil(max / 10)) return;
    const dropped = list.splice(0, list.length - max);
    for (const row of dropped) this.byId.delete(row.id);
  }

  clear(): void {
    this.byId.clear();
    this.byAccount.clear();
  }
}
