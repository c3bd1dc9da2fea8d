/**
 * What every delivery ledger must do, run over memory (ledger.memory.test.ts) and disk (disk-ledger.test.ts): an
 * event is claimed once until released, an advance that is undone puts back what it replaced only while it is still
 * the latest, and webhook events and re-read snapshots of one object are ordered together.
 */
import { expect, it } from 'vitest';
import type { DeliveryLedger } from '../../../src/realtime/ledger.js';

export function ledgerTests(make: () => DeliveryLedger): void {
  it('claims an event once per account until released', async () => {
    const l = make();
    expect([await l.claim(1, 10), await l.claim(1, 10), await l.claim(2, 10), await l.claim(1, 11)]).toEqual([true, false, true, true]);
    await l.release(1, 10);
    expect([await l.claim(1, 10), await l.claim(2, 10)]).toEqual([true, false]);
  });

  it('undoes an advance only while it is the latest, and only that exact version', async () => {
    const l = make();
    const key = '1:transaction:1';
    expect(await l.advance(key, [1000, 1])).toBe(true);
    expect(await l.advance(key, [2000, 2])).toBe(true);
    // Neither is the latest: nothing changes.
    await l.retreat(key, [2000, 3]);
    await l.retreat(key, [3000, 2]);
    await l.retreat(key, [1000, 1]);
    expect(await l.advance(key, [1500, 9])).toBe(false);
    // The latest: back to [1000, 1], so what lies between is news again, and what is older is not.
    await l.retreat(key, [2000, 2]);
    expect(await l.advance(key, [999, 9])).toBe(false);
    expect(await l.advance(key, [1500, 9])).toBe(true);
  });

  it('undoing the first advance of an object forgets it', async () => {
    const l = make();
    const key = '1:transaction:2';
    await l.advance(key, [1000, 1]);
    await l.retreat(key, [1000, 1]);
    expect(await l.advance(key, [1, 1])).toBe(true);
  });

  it('orders re-read snapshots and webhook events of one object together', async () => {
    const l = make();
    const key = '7:transaction:1';
    const steps: [string, boolean][] = [
      ['snapshot at 1000 (first sight)', await l.advanceTo(key, 1000)],
      ['snapshot at 1000 again', await l.advanceTo(key, 1000)],
      ['webhook at 1000 (same state, later)', await l.advance(key, [1000, 5])],
      ['webhook at 2000', await l.advance(key, [2000, 6])],
      ['snapshot at 2000 (state the webhook brought)', await l.advanceTo(key, 2000)],
      ['snapshot at 1500 (older)', await l.advanceTo(key, 1500)],
      ['snapshot at 3000', await l.advanceTo(key, 3000)],
      ['webhook at 3000 (same state, later)', await l.advance(key, [3000, 7])],
      ['webhook at 4000', await l.advance(key, [4000, 8])],
    ];
    expect(steps).toEqual([
      ['snapshot at 1000 (first sight)', true],
      ['snapshot at 1000 again', false],
      ['webhook at 1000 (same state, later)', false],
      ['webhook at 2000', true],
      ['snapshot at 2000 (state the webhook brought)', false],
      ['snapshot at 1500 (older)', false],
      ['snapshot at 3000', true],
      ['webhook at 3000 (same state, later)', false],
      ['webhook at 4000', true],
    ]);
  });

  it('undoes a snapshot\'s advance back to the webhook version it replaced', async () => {
    const l = make();
    const key = '7:payout:3';
    await l.advance(key, [1000, 4]);
    expect(await l.advanceTo(key, 2000)).toBe(true);
    await l.retreat(key, [2000, Number.MAX_SAFE_INTEGER]);
    expect(await l.advance(key, [1000, 4])).toBe(false);
    expect(await l.advance(key, [1500, 5])).toBe(true);
  });
}
