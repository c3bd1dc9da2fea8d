/**
 * An estimate of what a decoded upstream object holds in the heap, for the
 * entity cache's byte bounds: V8's usual costs (a header per object and
 * array, a slot per property or element, a string's characters at one byte
 * each, or two when it has a character past Latin-1). An estimate, not a
 * measure: it is the same for the same object, and grows with what grows.
 */

const OBJECT = 32;
const SLOT = 8;
const STRING = 16;
const WIDE = /[\u0100-\uffff]/;

const stringBytes = (s: string) => STRING + (WIDE.test(s) ? 2 * s.length : s.length);

/**
 * The estimated bytes of `value`, walked until the total passes `limit` (then
 * some number above `limit` is returned at once: a huge object costs no more
 * to refuse than the cap it passes). Values are trees: they come from JSON.
 */
export function estimateBytes(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') total += stringBytes(v);
    else if (Array.isArray(v)) {
      total += OBJECT + SLOT * v.length;
      if (total <= limit) for (const item of v) stack.push(item);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      total += OBJECT + SLOT * keys.length;
      // Keys are strings too, and metadata's are the caller's to choose.
      for (const key of keys) {
        if (total > limit) break;
        total += stringBytes(key);
        stack.push((v as Record<string, unknown>)[key]);
      }
    } else total += SLOT;
  }
  return total;
}
