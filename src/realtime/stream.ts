/**
 * One subscription's source: the account's bus events, filtered and mapped,
 * behind a bounded queue. graphql-ws pulls the next event only after the
 * previous one was written to the socket, so a client that stops reading
 * makes this queue grow; at `limit` the subscriber is declared too slow
 * (`onOverflow`), the queue is dropped and the stream ends.
 *
 * Written by hand rather than as an async generator: a generator's `return()`
 * waits behind a pending `next()`, so an idle subscription would stay on the
 * bus until its next event; here `return()` leaves at once.
 */
import type { EventBus } from './bus.js';
import type { PaymentEvent } from './events.js';

export interface StreamOptions<T> {
  bus: EventBus;
  accountId: number;
  /** The value to emit for an event, or null to skip it. */
  select(event: PaymentEvent): T | null;
  limit: number;
  /** Extra pressure signal besides the queue, e.g. the socket's unsent bytes. */
  isCongested?(): boolean;
  onOverflow(): void;
  /** Called just before each value is handed out (fresh loaders per event). */
  beforeEach?(): void;
}

export function boundedStream<T>(options: StreamOptions<T>): AsyncIterableIterator<T> {
  const queue: T[] = [];
  let waiting: ((result: IteratorResult<T>) => void) | null = null;
  let done = false;

  const finish = () => {
    if (done) return;
    done = true;
    unsubscribe();
    queue.length = 0;
    waiting?.({ value: undefined, done: true });
    waiting = null;
  };

  const unsubscribe = options.bus.subscribe(options.accountId, (event) => {
    if (done) return;
    const value = options.select(event);
    if (value === null) return;
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      options.beforeEach?.();
      resolve({ value, done: false });
      return;
    }
    if (queue.length >= options.limit || options.isCongested?.()) {
      finish();
      options.onOverflow();
      return;
    }
    queue.push(value);
  });

  return {
    next() {
      if (queue.length > 0) {
        options.beforeEach?.();
        return Promise.resolve({ value: queue.shift()!, done: false });
      }
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    return() {
      finish();
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(error?: unknown) {
      finish();
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
