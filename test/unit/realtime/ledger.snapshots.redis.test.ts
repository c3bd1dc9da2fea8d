/**
 * The ordering record shared by webhook events and re-read snapshots, in
 * memory and in a real redis-server: a snapshot is news only when strictly
 * later than every version seen, and a webhook of a state a snapshot
 * already brought is not news either.
 */
import { describe, expect, it } from 'vitest';
import { memoryLedger, redisLedger, type DeliveryLedger } from '../../../src/realtime/ledger.js';
import { describeWith } from '../../support/tools.js';
import { redisForSuite } from '../../realtime/redis-server.js';

describe('the memory ledger', () => {
  orderingTests(() => memoryLedger());
});

describeWith('redis-server', 'the redis ledger', () => {
  const client = redisForSuite();
  orderingTests(() => redisLedger(client(), `test-${Date.now()}:`));
});

function orderingTests(ledger: () => DeliveryLedger): void {
  it('orders re-read snapshots and webhook events of one object together', async () => {
    const l = ledger();
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
}
