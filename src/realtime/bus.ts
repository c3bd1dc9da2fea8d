/**
 * The event bus from the event log to the subscriptions: what a subscriber listens to on this instance. Delivery is
 * indexed by account, so an event only ever visits its own account's listeners. Across instances the bus is fed by
 * the Redis event log (redis-log.ts); without Redis, by `publish` here.
 */
import type { Logger } from '../logger.js';
import type { PaymentEvent } from './events.js';

export type EventListener = (event: PaymentEvent) => void;

export interface EventBus {
  /** `internal`: the gateway's own listener (reconciliation), not counted as a subscription. */
  subscribe(accountId: number, listener: EventListener, options?: { internal?: boolean }): () => void;
  listenerCount(): number;
  close(): Promise<void>;
}

/** The single instance's bus: what is published reaches its listeners before `publish` returns. */
export interface MemoryBus extends EventBus {
  publish(event: PaymentEvent): Promise<void>;
}

/** An account's first listener arrived, or its last left: what the event log's reader reads follows them. */
export interface FanoutHooks {
  opened(accountId: number): void;
  closed(accountId: number): void;
}

export class Fanout {
  private readonly byAccount = new Map<number, Set<EventListener>>();
  private listeners = 0;

  constructor(
    private readonly logger: Logger,
    private readonly hooks?: FanoutHooks,
  ) {}

  subscribe(accountId: number, listener: EventListener, options: { internal?: boolean } = {}): () => void {
    let set = this.byAccount.get(accountId);
    if (!set) {
      this.byAccount.set(accountId, (set = new Set()));
      this.hooks?.opened(accountId);
    }
    const counted = options.internal ? 0 : 1;
    if (!set.has(listener)) this.listeners += counted;
    set.add(listener);
    return () => {
      if (set.delete(listener)) this.listeners -= counted;
      if (set.size === 0 && this.byAccount.get(accountId) === set) {
        this.byAccount.delete(accountId);
        this.hooks?.closed(accountId);
      }
    };
  }

  get size(): number {
    return this.listeners;
  }

  /** False when no listener of the event's account is here. */
  deliver(event: PaymentEvent): boolean {
    const set = this.byAccount.get(event.accountId);
    if (!set) return false;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error({ err: error, eventId: event.id }, 'subscription listener failed');
      }
    }
    return true;
  }
}

export function memoryBus(logger: Logger): MemoryBus {
  const fanout = new Fanout(logger);
  return {
    async publish(event) {
      fanout.deliver(event);
    },
    subscribe: (accountId, listener, options) => fanout.subscribe(accountId, listener, options),
    listenerCount: () => fanout.size,
    async close() {},
  };
}
