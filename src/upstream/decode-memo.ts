/**
 * Items decoded before, validated once while they stay unchanged; why it is safe to share across
 * keys: docs/architecture.md, Design notes, "The decode memo".
 */
import { LRUCache } from 'lru-cache';

/** Larger items are decoded every time: keeping them would cost more memory than their decoding costs CPU. */
const MAX_ITEM_CHARS = 8_192;
/** The memo's bound in bytes, all models together, estimated as four bytes per character of an item's JSON text (the item kept, and the object decoded from it). */
const MAX_BYTES = 16 * 1024 * 1024;

export interface DecodeMemo {
  /** What `item` decoded to before under `model`, when it is the same JSON value as then; else undefined. */
  get(model: object, item: unknown): unknown;
  /** Remembers what `item` decoded to under `model`, when it is worth it. */
  set(model: object, item: unknown, decoded: unknown): void;
}

interface Entry {
  source: unknown;
  decoded: object;
  bytes: number;
}

export function createDecodeMemo(maxItems: number): DecodeMemo {
  const memo = new LRUCache<string, Entry>({ max: maxItems, maxSize: MAX_BYTES, sizeCalculation: (entry) => entry.bytes });
  const modelIds = new WeakMap<object, number>();
  let models = 0;
  const keyOf = (model: object, item: unknown): string | undefined => {
    if (typeof item !== 'object' || item === null) return undefined;
    const id = (item as { id?: unknown }).id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) return undefined;
    let modelId = modelIds.get(model);
    if (modelId === undefined) modelIds.set(model, (modelId = ++models));
    return `${modelId}:${id}`;
  };
  return {
    get(model, item) {
      const key = keyOf(model, item);
      const entry = key === undefined ? undefined : memo.get(key);
      return entry !== undefined && sameJson(entry.source, item) ? entry.decoded : undefined;
    },
    set(model, item, decoded) {
      const key = keyOf(model, item);
      if (key === undefined || typeof decoded !== 'object' || decoded === null) return;
      // A body parsed losslessly (decode.ts) has number objects for ids: keyOf leaves its items out.
      const text = JSON.stringify(item);
      if (text.length > MAX_ITEM_CHARS) return;
      memo.set(key, { source: item, decoded, bytes: text.length * 4 });
    },
  };
}

/** `Object.is`, so `-0` is not `0`; keys in order; a lossless-json number object is never a plain object. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], other[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  const otherKeys = Object.keys(b);
  if (keys.length !== otherKeys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== otherKeys[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}
