/** Due re-reads taken one account at a time, in turn: a busy account waits behind itself. */
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../../src/realtime/fair-queue.js';

describe('FairQueue', () => {
  it('takes one item per account in turn, each account\'s own in the order pushed', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 4; i++) queue.push(1, `a${i}`);
    queue.push(2, 'b1');
    queue.push(3, 'c1');
    queue.push(2, 'b2');
    expect(queue.size).toBe(7);
    const taken: (string | undefined)[] = [];
    while (queue.size > 0) taken.push(queue.shift());
    expect(taken).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(queue.shift()).toBeUndefined();
  });

  it('peeks at the next item without taking it', () => {
    const queue = new FairQueue<string>();
    expect(queue.peek()).toBeUndefined();
    queue.push(7, 'x');
    queue.push(8, 'y');
    expect(queue.peek()).toBe('x');
    expect(queue.size).toBe(2);
    expect(queue.shift()).toBe('x');
    expect(queue.peek()).toBe('y');
  });

  it('puts an account that comes back after emptying at the end of the turn', () => {
    const queue = new FairQueue<string>();
    queue.push(1, 'a1');
    queue.push(2, 'b1');
    expect(queue.shift()).toBe('a1');
    queue.push(1, 'a2');
    expect([queue.shift(), queue.shift()]).toEqual(['b1', 'a2']);
  });

  it('empties at once on clear', () => {
    const queue = new FairQueue<number>();
    queue.push(1, 1);
    queue.push(2, 2);
    queue.clear();
    expect([queue.size, queue.peek(), queue.shift()]).toEqual([0, undefined, undefined]);
  });
});
