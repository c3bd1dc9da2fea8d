/**
 * How deep a JSON value may nest. Every walk over a value recurses (V8's
 * `JSON.stringify` included, which overflows the stack from about 5,000
 * levels), so a value nested thousands of levels deep would fail whatever
 * serialises it: the answer, the entity cache, the realtime bus. The
 * gateway refuses such values where they come in: an upstream item
 * (decode.ts), a webhook's entity (realtime/receiver.ts) and custom metadata
 * in a mutation's input (payments/rules.ts).
 */
import { isLosslessNumber } from 'lossless-json';

/**
 * Levels an upstream item may nest, its own level counting one: far beyond
 * what the API sends, far below the stack's limit. An event carries its
 * object one level down, so an object (and what a mutation writes into it)
 * keeps one level for that.
 */
export const MAX_NESTING = 1_000;

/** Whether `value` nests at most `levels` objects or arrays deep; stops at the first that goes deeper. A lossless number is a leaf. */
export function nestsWithin(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null || isLosslessNumber(value)) return true;
  if (levels === 0) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!nestsWithin(value[i], levels - 1)) return false;
    return true;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (!nestsWithin(record[key], levels - 1)) return false;
  return true;
}
