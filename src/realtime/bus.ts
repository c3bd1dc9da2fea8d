/**
 * The event bus from the webhook receiver to the subscriptions: in memory, or Redis pub/sub across instances. Local
 * delivery is indexed by account, so an event only ever visits its own account's listeners.
 */
import type { RedisClient as Redis } from '../redis.js';
import { RedisLinks, type RedisTarget } from '../redis.js';
import type { Logger } from '../logger.js';
import { decode, encode } from '../upstream/index.js';
import type { PaymentEvent } from './events.js';

export type EventListener = (event: PaymentEvent) => void;

export interface EventBus {
  publish(event: PaymentEvent): Promise<void>;
  /** `internal`: the gateway's own listener (reconciliation), not counted as a subscription. */
  subscribe(accountId: number, listener: EventListener, options?: { internal?: boolean }): () => void;
  listenerCount(): number;
  close(): Promise<void>;
}

class Fanout {
  private readonly byAccount = new Map<number, Set<EventListener>>();
  private listeners = 0;

  constructor(private readonly logger: Logger) {}

  subscribe(accountId: number, listener: EventListener, options: { internal?: boolean } = {}): () => void {
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    const counted = options.internal ? 0 : 1;
    if (!set.has(listener)) this.listeners += counted;
    set.add(listener);
    return () => {
      if (set.delete(listener)) this.listeners -= counted;
      if (set.size === 0 && this.byAccount.get(accountId) === set) this.byAccount.delete(accountId);
    };
  }

  get size(): number {
    return this.listeners;
  }

  deliver(event: PaymentEvent): void {
    const set = this.byAccount.get(event.accountId);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error({ err: error, eventId: event.id }, 'subscription listener failed');
      }
    }
  }
}

export function memoryBus(logger: Logger): EventBus {
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

export interface RedisBusOptions {
  target: RedisTarget;
  channel: string;
  logger: Logger;
  links?: RedisLinks;
}

/**
 * Every instance, the publisher included, delivers what comes back from the channel: each subscriber gets each event
 * once. Written with upstream/codec.ts, so `Decimal` amounts stay `Decimal`s on every instance.
 */
export async function redisBus({ target, channel, logger, links = new RedisLinks(logger) }: RedisBusOptions): Promise<EventBus & { publisher: Redis }> {
  const publisher = links.open(target, 'bus-publisher');
  const subscriber = links.open(target, 'bus-subscriber');
  await Promise.all([publisher.connect(), subscriber.connect()]);
  const fanout = new Fanout(logger);
  subscriber.on('message', (ch: string, message: string) => {
    if (ch !== channel) return;
    let event: PaymentEvent;
    try {
      event = decode(message) as PaymentEvent;
    } catch {
      logger.warn({ channel }, 'unreadable message on the event channel');
      return;
    }
    fanout.deliver(event);
  });
  await subscriber.subscribe(channel);
  return {
    publisher,
    async publish(event) {
      await publisher.publish(channel, encode(event));
    },
    subscribe: (accountId, listener, options) => fanout.subscribe(accountId, listener, options),
    listenerCount: () => fanout.size,
    async close() {
      await Promise.allSettled([subscriber.quit(), publisher.quit()]);
    },
  };
}
