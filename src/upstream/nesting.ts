/**
 * How deep a JSON value may nest: every walk over one recurses (`JSON.stringify` too), so a value
 * nested thousands deep is refused where it comes in (upstream item, webhook entity, custom metadata).
 */
import { isLosslessNumber } from 'lossless-json';

/** Far beyond what the API sends, far below the stack's limit; one level kept for an event carrying its object. */
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
