/** The byte-bounded cache with a share per caller that every cache of what callers send sits on. */
import { describe, expect, it } from 'vitest';
import { FairCache } from '../../../src/graphql/fair-cache.js';

describe('FairCache', () => {
  it("drops a caller's own least recently used entries past its share, never another's", () => {
    const cache = new FairCache<string, string>({ maxBytes: 1000, callerShare: 0.3 });
    expect(cache.perCaller).toBe(300);
    cache.set('other-1', 'o', 100, 'other');
    cache.set('other-2', 'o', 100, 'other');
    for (let i = 0; i < 50; i++) expect(cache.set(`flood-${i}`, 'f', 100, 'flooder')).toBe(true);
    expect(cache.bytesOf('flooder')).toBe(300);
    expect(cache.get('other-1')).toBe('o');
    expect(cache.get('other-2')).toBe('o');
    expect(cache.get('flood-49')).toBe('f');
    expect(cache.get('flood-46')).toBeUndefined();
    expect(cache.bytes).toBe(500);
  });

  it('keeps what its owner used last: a read moves it to the end of its own order', () => {
    const cache = new FairCache<string, number>({ maxBytes: 1000, callerShare: 0.3 });
    for (let i = 0; i < 3; i++) cache.set(`k${i}`, i, 100, 'a');
    expect(cache.get('k0')).toBe(0);
    cache.set('k3', 3, 100, 'a');
    expect(cache.get('k0')).toBe(0);
    expect(cache.get('k1')).toBeUndefined();
  });

  it('does not keep an entry over one caller share, and holds the whole within its bytes', () => {
    const cache = new FairCache<string, number>({ maxBytes: 1000, callerShare: 0.5 });
    expect(cache.set('big', 1, 501, 'a')).toBe(false);
    expect(cache.get('big')).toBeUndefined();
    for (let owner = 0; owner < 20; owner++) cache.set(`k${owner}`, owner, 400, `owner-${owner}`);
    expect(cache.bytes).toBeLessThanOrEqual(1000);
    expect(cache.size).toBe(2);
    // Those the whole evicted gave their owners' bytes back.
    expect(cache.bytesOf('owner-0')).toBe(0);
    expect(cache.bytesOf('owner-19')).toBe(400);
  });

  it('charges a replaced entry to its new owner only', () => {
    const cache = new FairCache<string, number>({ maxBytes: 1000, callerShare: 0.5 });
    cache.set('k', 1, 200, 'a');
    cache.set('k', 2, 300, 'b');
    expect(cache.bytesOf('a')).toBe(0);
    expect(cache.bytesOf('b')).toBe(300);
    expect(cache.get('k')).toBe(2);
    cache.delete('k');
    expect(cache.bytesOf('b')).toBe(0);
    expect(cache.bytes).toBe(0);
  });
});
