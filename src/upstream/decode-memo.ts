/**
 * Items decoded before, by their exact JSON text. Most reads ask again for
 * objects that have not changed (a final transaction on every page, a
 * customer read by every request): validated once, they are not validated
 * again while they stay in the memo. Keyed by content, per model, so it can
 * only ever answer with what that very text decodes to; a changed object is
 * new text, decoded afresh. Decoded objects are shared, as the entity cache
 * shares them: nothing downstream changes them. (@apollo/subgraph defines a
 * `__typename` on an entity it returns, which is why they are not frozen;
 * the memo is per model, so that name is always the same.)
 */
import { LRUCache } from 'lru-cache';

/** Larger items are decoded every time: their text would cost more memory than their decoding costs CPU. */
const MAX_ITEM_CHARS = 8_192;
/** The memo's bound in bytes, all models together, counting each item's text twice (the key, and the object decoded from it). */
const MAX_BYTES = 16 * 1024 * 1024;

export interface DecodeMemo {
  /** The key of `item`, or undefined when it is not worth remembering. */
  keyOf(item: unknown): string | undefined;
  get(model: object, key: string): unknown;
  set(model: object, key: string, decoded: unknown): void;
}

export function createDecodeMemo(maxItems: number): DecodeMemo {
  const memo = new LRUCache<string, object>({ max: maxItems, maxSize: MAX_BYTES, sizeCalculation: (_value, key) => key.length * 4 });
  const modelIds = new WeakMap<object, number>();
  let models = 0;
  const idOf = (model: object) => {
    let id = modelIds.get(model);
    if (id === undefined) modelIds.set(model, (id = ++models));
    return id;
  };
  return {
    keyOf(item) {
      if (typeof item !== 'object' || item === null) return undefined;
      const text = JSON.stringify(item);
      // A body parsed losslessly (decode.ts) holds number objects, written here as objects that a
      // plain body could also send: such items are decoded every time rather than share a key.
      if (text.length > MAX_ITEM_CHARS || text.includes('"isLosslessNumber"')) return undefined;
      return text;
    },
    get: (model, key) => memo.get(`${idOf(model)}:${key}`),
    set(model, key, decoded) {
      if (typeof decoded === 'object' && decoded !== null) memo.set(`${idOf(model)}:${key}`, decoded);
    },
  };
}
