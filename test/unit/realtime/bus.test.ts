/** The single instance's bus: an event reaches its own account's listeners, each once, and no other. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { memoryBus } from '../../../src/realtime/bus.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';

const event = (id: number, accountId: number): PaymentEvent => ({ id, type: 'transaction.approved', object: 'transaction', objectId: id, accountId, entity: null, createdAt: null, current: true });

describe('memoryBus', () => {
  it('delivers an event to its account\'s listeners before publish returns, and to no other account', async () => {
    const bus = memoryBus(createLogger('silent'));
    const seen: string[] = [];
    bus.subscribe(1, (e) => seen.push(`a${e.id}`));
    bus.subscribe(1, (e) => seen.push(`b${e.id}`));
    bus.subscribe(2, (e) => seen.push(`c${e.id}`));
    await bus.publish(event(10, 1));
    expect(seen).toEqual(['a10', 'b10']);
    await bus.publish(event(11, 3));
    expect(seen).toEqual(['a10', 'b10']);
  });

  it('counts subscriptions but not internal listeners, a listener added twice once, and forgets them when they leave', async () => {
    const bus = memoryBus(createLogger('silent'));
    const seen: number[] = [];
    const listener = (e: PaymentEvent) => seen.push(e.id);
    const leave = bus.subscribe(1, listener);
    bus.subscribe(1, listener);
    const leaveInternal = bus.subscribe(1, () => undefined, { internal: true });
    expect(bus.listenerCount()).toBe(1);
    await bus.publish(event(1, 1));
    expect(seen).toEqual([1]);
    leave();
    leave();
    leaveInternal();
    expect(bus.listenerCount()).toBe(0);
    await bus.publish(event(2, 1));
    expect(seen).toEqual([1]);
  });

  it('logs a listener that throws and still delivers to the others', async () => {
    const lines: string[] = [];
    const bus = memoryBus(createLogger('error', { destination: { write: (line: string) => void lines.push(line) } }));
    const seen: number[] = [];
    bus.subscribe(1, () => {
      throw new Error('listener broke');
    });
    bus.subscribe(1, (e) => seen.push(e.id));
    await bus.publish(event(5, 1));
    expect(seen).toEqual([5]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'subscription listener failed', eventId: 5, err: { message: 'listener broke' } });
    await bus.close();
  });

  it('delivers an event to the listeners there when it arrived: one that leaves or joins meanwhile changes the next event only', async () => {
    const bus = memoryBus(createLogger('silent'));
    const seen: string[] = [];
    const leave = bus.subscribe(1, (e) => {
      seen.push(`first${e.id}`);
      leave();
      bus.subscribe(1, (later) => seen.push(`joined${later.id}`));
    });
    bus.subscribe(1, (e) => seen.push(`second${e.id}`));
    await bus.publish(event(1, 1));
    await bus.publish(event(2, 1));
    expect(seen).toEqual(['first1', 'second1', 'second2', 'joined2']);
  });
});
