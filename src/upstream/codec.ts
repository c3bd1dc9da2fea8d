/**
 * Decoded objects as Redis strings and back (entity cache, event bus), `Decimal`s tagged as
 * `{"$decimal": ...}`; a data object that only looks like a tag (custom metadata is the caller's)
 * gets one more `$`, so it comes back as it was.
 */
import { Decimal } from './decimal.js';

const TAG = '$decimal';
/** The one key of a tag, or of an object of the data written with it escaped (`$$decimal`, `$$$decimal`...). */
const TAG_LIKE = /^\$+decimal$/;

/** An object's key when it has exactly one and that key looks like a tag's. */
function tagLikeKey(value: object): string | undefined {
  let only: string | undefined;
  for (const key in value) {
    if (only !== undefined) return undefined;
    only = key;
  }
  return only !== undefined && TAG_LIKE.test(only) ? only : undefined;
}

export function encode(value: unknown): string {
  return JSON.stringify(value, function replace(this: Record<string, unknown>, key: string, v: unknown) {
    // `this[key]` is the value before its toJSON ran.
    const original = this[key];
    if (original instanceof Decimal) return { [TAG]: original.toString() };
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const like = tagLikeKey(v);
    return like === undefined ? v : { [`$${like}`]: (v as Record<string, unknown>)[like] };
  });
}

export function decode(text: string): unknown {
  // eslint-disable-next-line no-restricted-properties -- reads what encode wrote, where every amount is a tagged string
  return JSON.parse(text, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const like = tagLikeKey(v);
    if (like === undefined) return v;
    const inner = (v as Record<string, unknown>)[like];
    if (like !== TAG) return { [like.slice(1)]: inner };
    // A tag holds a Decimal's canonical text; anything else is kept as the object it is.
    return (typeof inner === 'string' && Decimal.parse(inner)) || v;
  });
}
