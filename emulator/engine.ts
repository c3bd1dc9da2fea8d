/**
 * The emulator's state and the services every resource module shares: ids,
 * accounts (one per sandbox key, created on first use), tables, events and
 * their delivery, timers. Resource modules hold the rules of each resource.
 */
import { createHash, randomBytes } from 'node:crypto';
import { WebhookDispatcher, type DeliveryTarget } from './dispatcher.js';
import { MODES } from './lifecycle.js';
import type { EmulatorOptions } from './options.js';
import { Renderer, type Kind } from './render.js';
import { Scheduler, type TimerHandle } from './scheduler.js';
import {
  Table,
  type AccountRow,
  type CurrencyRow,
  type CustomerRow,
  type EventRow,
  type LogRow,
  type PayoutRow,
  type PhoneNumberRow,
  type TransactionRow,
  type WebhookRow,
} from './store.js';

export type EventObject = 'transaction' | 'payout' | 'customer';

export class Engine {
  readonly render: Renderer;
  readonly scheduler = new Scheduler();
  readonly dispatcher: WebhookDispatcher;
  /** Set once the server listens; used for hosted-checkout and receipt links. */
  baseUrl = '';

  readonly transactions = new Table<TransactionRow>();
  readonly payouts = new Table<PayoutRow>();
  readonly customers = new Table<CustomerRow>();
  readonly phoneNumbers = new Table<PhoneNumberRow>();
  readonly currencies = new Table<CurrencyRow>();
  readonly webhooks = new Table<WebhookRow>();
  readonly events = new Table<EventRow>();
  readonly logs = new Table<LogRow>();

  /** Kept off the webhook rows so that no read or log can show them. */
  readonly webhookSecrets = new Map<number, string>();
  /** Per-transaction token -> transaction id (and back). */
  readonly tokens = new Map<string, number>();
  readonly tokenOf = new Map<number, string>();
  /** Pending outcome timers, keyed `transaction:<id>` / `payout:<id>`. */
  readonly pendingTimers = new Map<string, TimerHandle>();

  private readonly accountsByKey = new Map<string, AccountRow>();
  private readonly accountIds = new Set<number>();
  private readonly nextIds = new Map<string, number>();

  /** Where every account's events also go (EMULATOR_FORWARD_TO), settable after start. */
  private forward: { url: string; secret: string } | null = null;

  /** Starts (or, with null, stops) delivering every account's events to one URL. */
  forwardEventsTo(target: { url: string; secret: string } | null): void {
    this.forward = target;
  }

  constructor(readonly options: EmulatorOptions) {
    if (options.forwardTo && options.forwardSecret) this.forward = { url: options.forwardTo, secret: options.forwardSecret };
    this.render = new Renderer(options.responseStyle);
    this.dispatcher = new WebhookDispatcher({
      scheduler: this.scheduler,
      retryBaseMs: options.webhookRetryBaseMs,
      maxAttempts: options.webhookMaxAttempts,
      timeoutMs: options.webhookTimeoutMs,
      logger: options.logger,
      isActive: (w) => w.enabled && this.webhooks.find(w.account_id, w.id) === w,
      disable: (w) => {
        w.enabled = false;
        w.updated_at = this.now();
      },
    });
  }

  /** Ids are global per emulator and only grow, even across `reset()`. */
  nextId(kind: string): number {
    const id = (this.nextIds.get(kind) ?? 0) + 1;
    this.nextIds.set(kind, id);
    return id;
  }

  now(): string {
    return this.clock ?? new Date().toISOString();
  }

  /**
   * Runs `fn` with `now()` fixed at `when`, so rows, events and logs it
   * creates carry that time: how the demo seed backdates its history.
   */
  at<T>(when: Date, fn: () => T): T {
    const saved = this.clock;
    this.clock = when.toISOString();
    try {
      return fn();
    } finally {
      this.clock = saved;
    }
  }

  private clock: string | undefined;

  randomKey(prefix: string, bytes = 12): string {
    return `${prefix}${randomBytes(bytes).toString('hex')}`;
  }

  /** The account of a sandbox key, created with its currencies on first use. */
  accountFor(apiKey: string): AccountRow {
    const known = this.accountsByKey.get(apiKey);
    if (known) return known;
    // Deterministic per key string: the same key gets the same account id on every run.
    const digest = createHash('sha256').update(apiKey).digest();
    let id = 100_000 + (digest.readUInt32BE(0) % 900_000);
    while (this.accountIds.has(id)) id++;
    const now = this.now();
    const live = apiKey.startsWith('sk_live_');
    const account: AccountRow = {
      id,
      name: `${live ? 'Live rehearsal' : 'Sandbox'} account ${digest.toString('hex').slice(0, 6)}`,
      environment: live ? 'live' : 'sandbox',
      balance_id: this.nextId('balance'),
      created_at: now,
      updated_at: now,
    };
    this.accountsByKey.set(apiKey, account);
    this.accountIds.add(id);
    this.currencies.insert({
      id: this.nextId('currency'),
      account_id: id,
      name: 'FCFA',
      iso: 'XOF',
      code: 952,
      prefix: null,
      suffix: 'CFA',
      div: 1,
      modes: [...MODES],
      default: true,
      created_at: now,
      updated_at: now,
    });
    this.currencies.insert({
      id: this.nextId('currency'),
      account_id: id,
      name: 'Franc guinéen',
      iso: 'GNF',
      code: 324,
      prefix: null,
      suffix: 'GNF',
      div: 1,
      modes: ['mtn_open', 'orange_gn'],
      default: false,
      created_at: now,
      updated_at: now,
    });
    return account;
  }

  currencyByIso(accountId: number, iso: string): CurrencyRow | undefined {
    const wanted = iso.toUpperCase();
    return this.currencies.all(accountId).find((c) => c.iso === wanted);
  }

  defaultCurrency(accountId: number): CurrencyRow | undefined {
    return this.currencies.all(accountId).find((c) => c.default);
  }

  /** Records an event with a snapshot of the object and delivers it. */
  recordEvent(accountId: number, type: string, object: EventObject, row: { id: number }): EventRow {
    const now = this.now();
    const kind: Kind = object;
    const entity = JSON.parse(JSON.stringify(this.render.object(kind, row))) as Record<string, unknown>;
    const event: EventRow = {
      id: this.nextId('event'),
      account_id: accountId,
      type,
      object,
      entity,
      object_id: row.id,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    this.events.insert(event);
    // Each event holds a copy of its object: without a bound a busy account's memory only grows.
    this.events.trim(accountId, this.options.maxEventsPerAccount);
    this.deliver(event);
    return event;
  }

  private deliver(event: EventRow): void {
    const targets: DeliveryTarget[] = [];
    for (const w of this.webhooks.all(event.account_id)) {
      const secret = this.webhookSecrets.get(w.id);
      if (w.enabled && secret !== undefined) targets.push({ url: w.url, secret, sslVerify: w.ssl_verify, webhook: w });
    }
    if (this.forward) targets.push({ url: this.forward.url, secret: this.forward.secret, sslVerify: false, webhook: null });
    if (targets.length === 0) return;
    const payload = JSON.stringify({
      id: event.id,
      name: event.type,
      type: event.type,
      object: event.object,
      entity: event.entity,
      object_id: event.object_id,
      account_id: event.account_id,
      created_at: event.created_at,
    });
    this.dispatcher.deliver(event.id, event.type, payload, targets);
  }

  schedulePending(key: string, ms: number, fn: () => void): void {
    this.scheduler.cancel(this.pendingTimers.get(key));
    this.pendingTimers.set(
      key,
      this.scheduler.after(ms, () => {
        this.pendingTimers.delete(key);
        fn();
      }),
    );
  }

  cancelPending(key: string): void {
    this.scheduler.cancel(this.pendingTimers.get(key));
    this.pendingTimers.delete(key);
  }

  /** Forgets every account and object, cancels timers and deliveries. Ids keep growing. */
  reset(): void {
    this.scheduler.clear();
    this.dispatcher.abortAll();
    this.dispatcher.clearRecords();
    this.pendingTimers.clear();
    for (const t of [this.transactions, this.payouts, this.customers, this.phoneNumbers, this.currencies, this.webhooks, this.events, this.logs]) {
      (t as Table<{ id: number; account_id: number }>).clear();
    }
    this.webhookSecrets.clear();
    this.tokens.clear();
    this.tokenOf.clear();
    this.accountsByKey.clear();
    this.accountIds.clear();
  }

  close(): void {
    this.scheduler.clear();
    this.dispatcher.close();
  }
}
