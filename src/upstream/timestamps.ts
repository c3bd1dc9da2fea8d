/**
 * Every timestamp form the API family sends (docs/upstream.md, Response shapes) to RFC 3339 with
 * the upstream's digits kept; a zoneless time is UTC; anything else passes and its field fails alone.
 */

/** RFC 3339 date-time, as the DateTime scalar serves it. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const ZONELESS = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LOWER_T_OR_Z = /^(\d{4}-\d{2}-\d{2})[t ](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(z|[+-]\d{2}:?\d{2})$/i;
/** Unix times below this are seconds, above it milliseconds (1e11 s is the year 5138). */
const SECONDS_LIMIT = 1e11;

export function normaliseTimestamp(value: string | number): string | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    const date = new Date(Math.abs(value) < SECONDS_LIMIT ? value * 1000 : value);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  const text = value.trim();
  if (text === '') return null;
  if (RFC3339.test(text)) return text;
  if (/^\d+(\.\d+)?$/.test(text)) return normaliseTimestamp(Number(text));
  if (DATE_ONLY.test(text)) return `${text}T00:00:00Z`;
  const zoneless = ZONELESS.exec(text);
  if (zoneless) return `${zoneless[1]}T${zoneless[2]!.length === 5 ? `${zoneless[2]}:00` : zoneless[2]}Z`;
  const loose = LOWER_T_OR_Z.exec(text);
  if (loose) {
    const zone = loose[3]!.toUpperCase();
    return `${loose[1]}T${loose[2]}${zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`;
  }
  return value;
}
