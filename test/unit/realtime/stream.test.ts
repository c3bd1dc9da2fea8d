/** One subscription's bounded queue of bus events: in order, selected, ended at the limit or on return. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { memoryBus } from '../../../src/realtime/bus.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { boundedStream, type StreamOptions } from '../../../src/realtime/stream.js';

const event = (id: number, type = 'transaction.approved'): PaymentEvent => ({ id, type, object: 'transaction', objectId: id, accountId: 1, entity: null, createdAt: null, current: true });

function stream(overrides: Partial<StreamOptions<number>> = {}) {
  const bus = memoryBus(createLogger('silent'));
  const overflows: number[] = [];
  const iterator = boundedStream<number>({
    bus,
    accountId: 1,
    select: (e) => (e.type === 'transaction.approved' ? e.id : null),
    limit: 3,
    onOverflow: () => overflows.push(1),
    ...overrides,
  });
  return { bus, iterator, overflows };
}

describe('boundedStream', () => {
  it('hands the selected events in order, to a waiting reader or from its queue', async () => {
    const { bus, iterator } = stream();
    const first = iterator.next();
    await bus.publish(event(1));
    expect(await first).toEqual({ value: 1, done: false });
    await bus.publish(event(2, 'payout.sent'));
    await bus.publish(event(3));
    await bus.publish(event(4));
    expect([await iterator.next(), await iterator.next()]).toEqual([{ value: 3, done: false }, { value: 4, done: false }]);
  });

  it('ends a reader that falls the limit behind: overflow once, off the bus, done', async () => {
    const { bus, iterator, overflows } = stream();
    for (let id = 1; id <= 4; id++) await bus.publish(event(id));
    expect(overflows).toEqual([1]);
    expect(bus.listenerCount()).toBe(0);
    await bus.publish(event(5));
    expect(overflows).toEqual([1]);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('ends early when the connection says it is congested', async () => {
    let congested = false;
    const { bus, overflows } = stream({ isCongested: () => congested });
    await bus.publish(event(1));
    congested = true;
    await bus.publish(event(2));
    expect(overflows).toEqual([1]);
  });

  it('on return: a pending read ends, the queue is dropped and the bus is left', async () => {
    const { bus, iterator } = stream();
    const pending = iterator.next();
    await iterator.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(bus.listenerCount()).toBe(0);
    await expect(stream().iterator.throw!('stop')).rejects.toThrow('stop');
  });

  it('calls beforeEach once per event handed out', async () => {
    let fresh = 0;
    const { bus, iterator } = stream({ beforeEach: () => void (fresh += 1) });
    const waiting = iterator.next();
    await bus.publish(event(1));
    await waiting;
    await bus.publish(event(2));
    await iterator.next();
    expect(fresh).toBe(2);
    expect(iterator[Symbol.asyncIterator]()).toBe(iterator);
  });
});
