/** A decoded upstream object's heap, estimated from V8's usual costs: the same for the same object. */

const OBJECT = 32;
const SLOT = 8;
const STRING = 16;
const WIDE = /[\u0100-\uffff]/;

const stringBytes = (s: string) => STRING + (WIDE.test(s) ? 2 * s.length : s.length);

/** Stops once past `limit`: a huge object costs no more to refuse than the cap. Values from JSON are trees. */
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
