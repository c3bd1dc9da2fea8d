/** The re-read lease over a real redis-server: one holder per object across instances, renewed by it, lapsing on its own. */
import { expect, it } from 'vitest';
import { redisLease } from '../../../src/realtime/poll-lease.js';
import { describeWith } from '../../support/tools.js';
import { redisForSuite } from '../../realtime/redis-server.js';

describeWith('redis-server', 'redisLease', () => {
  const redis = redisForSuite();
  const prefix = () => `poll-lease-${Date.now()}-${Math.random()}:`;

  it('gives an object to one instance at a time; its holder renews it, another waits for its release', async () => {
    const at = prefix();
    const a = redisLease(redis(), at, 'instance-a');
    const b = redisLease(redis(), at, 'instance-b');
    expect(await a.acquire('1:transaction:7', 10_000)).toBe(true);
    expect(await b.acquire('1:transaction:7', 10_000)).toBe(false);
    expect(await b.acquire('1:transaction:8', 10_000)).toBe(true);
    expect(await a.acquire('1:transaction:7', 20_000)).toBe(true);
    expect(await redis().pttl(`${at}poll:1:transaction:7`)).toBeGreaterThan(10_000);
    // Another's release does not free it; the holder's does.
    await b.release('1:transaction:7');
    expect(await b.acquire('1:transaction:7', 10_000)).toBe(false);
    await a.release('1:transaction:7');
    expect(await b.acquire('1:transaction:7', 10_000)).toBe(true);
  });

  it('lapses on its own when the holder stops renewing, and takes a fraction of a millisecond as one', async () => {
    const at = prefix();
    const a = redisLease(redis(), at, 'instance-a');
    const b = redisLease(redis(), at, 'instance-b');
    expect(await a.acquire('2:payout:1', 0.2)).toBe(true);
    expect(await redis().pttl(`${at}poll:2:payout:1`)).toBeLessThanOrEqual(1);
    const until = Date.now() + 5_000;
    while (!(await b.acquire('2:payout:1', 10_000)) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await redis().get(`${at}poll:2:payout:1`)).toBe('instance-b');
  });
});
