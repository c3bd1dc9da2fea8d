/**
 * Decoded upstream objects as Redis strings and back, for the entity cache
 * (src/cache/redis-store.ts) and the Redis event bus (src/realtime/bus.ts).
 * Amounts are `Decimal`s, which JSON would turn into plain strings; they are
 * tagged on the way in and rebuilt on the way out, so a cached object or a
 * published event is the same object the decoder made.
 */
import { asDecimal, Decimal } from './decimal.js';

const TAG = '$decimal';

export function encode(value: unknown): string {
  return JSON.stringify(value, function replace(this: Record<string, unknown>, key: string, v: unknown) {
    // `this[key]` is the value before its toJSON ran.
    const original = this[key];
    return original instanceof Decimal ? { [TAG]: original.toString() } : v;
  });
}

export function decode(text: string): unknown {
  // eslint-disable-next-line no-restricted-properties -- reads what encode wrote, where every amount is a tagged string
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const tagged = (v as Record<string, unknown>)[TAG];
      if (typeof tagged === 'string' && Object.keys(v).length === 1) return asDecimal(tagged);
    }
    return v;
  });
}
