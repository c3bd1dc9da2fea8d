/** Without Redis one instance re-reads everything: its lease is always granted. */
import { describe, expect, it } from 'vitest';
import { soleLease } from '../../../src/realtime/poll-lease.js';

describe('soleLease', () => {
  it('grants every lease, for any object, again after a release', async () => {
    expect(await soleLease.acquire('1:transaction:1', 1_000)).toBe(true);
    expect(await soleLease.acquire('1:transaction:1', 1_000)).toBe(true);
    await soleLease.release('1:transaction:1');
    expect(await soleLease.acquire('2:payout:9', 0)).toBe(true);
  });
});
