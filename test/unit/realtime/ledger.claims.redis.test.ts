/**
 * The delivery ledger's own promises, in memory and in Redis: an event is
 * claimed once until released, and an advance that is undone puts back what
 * it replaced, only while it is still the latest.
 */
import { describe, expect, it } from 'vitest';
import { memoryLedger, redisLedger, type DeliveryLedger } from '../../../src/realtime/ledger.js';
import { describeWith } from '../../support/tools.js';
import { redisForSuite } from '../../realtime/redis-server.js';

function ledgerTests(make: () => DeliveryLedger): void {
  it('claims an event once per account until released', async () => {
    const l = make();
    expect([await l.claim(1, 10), await l.claim(1, 10), await l.claim(2, 10), await l.claim(1, 11)]).toEqual([true, false, true, true]);
    await l.release(1, 10);
    expect([await l.claim(1, 10), await l.claim(2, 10)]).toEqual([true, false]);
  });

  it('undoes an advance only while it is the latest, and only that exact version', async () => {
    const l = make();
    const key = 'acct:transaction:1';
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
    const key = 'acct:transaction:2';
    await l.advance(key, [1000, 1]);
    await l.retreat(key, [1000, 1]);
    expect(await l.advance(key, [1, 1])).toBe(true);
  });
}

describe('memory ledger', () => {
  ledgerTests(() => memoryLedger());
});

describeWith('redis-server', 'Redis ledger', () => {
  const client = redisForSuite();
  let n = 0;
  ledgerTests(() => redisLedger(client(), `ledger-${(n += 1)}:`));
});
