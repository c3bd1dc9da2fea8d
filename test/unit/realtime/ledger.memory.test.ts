/**
 * The memory ledger holds what it has seen, not its bound: a gateway that never got a webhook does not
 * carry 100,000 empty slots, and the bound still holds once the ledger is full.
 */
import { describe, expect, it } from 'vitest';
import { memoryLedger } from '../../../src/realtime/ledger.js';

const MB = 1024 * 1024;

describe('memory ledger, memory', () => {
  it('allocates nothing up front for its bound', () => {
    const before = process.memoryUsage().heapUsed;
    // Slots made up front would take about 60 MB of heap here, for both maps.
    const ledger = memoryLedger(1_000_000);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * MB);
    expect(ledger).toBeDefined();
  });

  it('still forgets the oldest event past its bound', async () => {
    const ledger = memoryLedger(3);
    for (const id of [1, 2, 3, 4]) expect(await ledger.claim(7, id)).toBe(true);
    expect(await ledger.claim(7, 4)).toBe(false);
    expect(await ledger.claim(7, 2)).toBe(false);
    // Event 1 was the least recently used: forgotten, so taken again.
    expect(await ledger.claim(7, 1)).toBe(true);
  });
});
