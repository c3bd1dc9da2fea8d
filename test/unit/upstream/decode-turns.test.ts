/** Turns at decoding: keys in rotation, one slice each, the event loop served between slices. */
import { describe, expect, it } from 'vitest';
import { DecodeTurns, SLICE_MS } from '../../../src/upstream/decode-turns.js';

/** Runs `slices` turns for `key`, noting each in `order`. */
async function decodeWith(turns: DecodeTurns, key: string, slices: number, order: string[]): Promise<void> {
  for (let i = 0; i < slices; i++) {
    await turns.turn(key);
    order.push(`${key}${i}`);
  }
}

describe('DecodeTurns', () => {
  it('gives keys their turns in rotation, so a big answer does not hold a small one back', async () => {
    const turns = new DecodeTurns();
    const order: string[] = [];
    await Promise.all([decodeWith(turns, 'big', 5, order), decodeWith(turns, 'small', 2, order)]);
    expect(order).toEqual(['big0', 'small0', 'big1', 'small1', 'big2', 'big3', 'big4']);
    expect(turns.keysWaiting).toBe(0);
  });

  it('serves the event loop between two slices of one key', async () => {
    const turns = new DecodeTurns();
    const order: string[] = [];
    const decoding = decodeWith(turns, 'only', 3, order);
    // Queued behind the first turn: it runs once that slice has, before the next.
    setImmediate(() => order.push('io'));
    await decoding;
    expect(order).toEqual(['only0', 'io', 'only1', 'only2']);
  });

  it('counts the keys waiting, one per key however many slices it asked for', async () => {
    const turns = new DecodeTurns(3);
    expect(turns.sliceMs).toBe(3);
    expect(new DecodeTurns().sliceMs).toBe(SLICE_MS);
    const waiting = [turns.turn('a'), turns.turn('a'), turns.turn('b')];
    expect(turns.keysWaiting).toBe(2);
    await Promise.all(waiting);
    expect(turns.keysWaiting).toBe(0);
    // Asked again once idle, a turn is still given.
    await turns.turn('c');
  });
});
