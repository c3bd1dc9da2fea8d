/** The same over a real redis-server: kept apart from the in-process tests of this module, which run in the quick loop. */
import { expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/access/rate-limit.js';
import { redisClientsForSuite } from '../../realtime/redis-server.js';
import { describeWith } from '../../support/tools.js';

describeWith('redis-server', 'createRateLimiter over Redis', () => {
  const client = redisClientsForSuite();

  it('two instances with the same prefix share the count; another prefix has its own', async () => {
    const one = createRateLimiter({ perMinute: 2, prefix: 'shared', redis: client() });
    const two = createRateLimiter({ perMinute: 2, prefix: 'shared', redis: client() });
    const other = createRateLimiter({ perMinute: 2, prefix: 'other', redis: client() });
    expect(await one.take('caller')).toEqual({ allowed: true });
    expect(await two.take('caller')).toEqual({ allowed: true });
    const refused = await one.take('caller');
    expect(refused.allowed).toBe(false);
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await other.take('caller')).toEqual({ allowed: true });
  });

  it('while Redis is unreachable, a memory limiter of the same rate stands in', async () => {
    const c = client();
    const limiter = createRateLimiter({ perMinute: 1, prefix: 'down', redis: c });
    c.disconnect();
    expect(await limiter.take('caller')).toEqual({ allowed: true });
    expect((await limiter.take('caller')).allowed).toBe(false);
  });
});
