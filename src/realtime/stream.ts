/**
 * One subscription's bounded queue of bus events; a client that stops reading is declared too slow at `limit`.
 * Not an async generator: its `return()` waits behind a pending `next()`, keeping an idle subscription on the bus.
 */
import type { EventBus } from './bus.js';
import type { PaymentEvent } from './events.js';

export interface StreamOptions<T> {
  bus: EventBus;
  accountId: number;
  select(event: PaymentEvent): T | null;
  limit: number;
  isCongested?(): boolean;
  onOverflow(): void;
  /** Fresh loaders per event. */
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
