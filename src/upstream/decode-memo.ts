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

export interface DecodeMemo {
  /** The key of `item`, or undefined when it is not worth remembering. */
  keyOf(item: unknown): string | undefined;
  get(model: object, key: string): unknown;
  set(model: object, key: string, decoded: unknown): void;
}

export function createDecodeMemo(maxItems: number): DecodeMemo {
  const byModel = new WeakMap<object, LRUCache<string, object>>();
  return {
    keyOf(item) {
      if (typeof item !== 'object' || item === null) return undefined;
      const text = JSON.stringify(item);
      return text.length <= MAX_ITEM_CHARS ? text : undefined;
    },
    get: (model, key) => byModel.get(model)?.get(key),
    set(model, key, decoded) {
      if (typeof decoded !== 'object' || decoded === null) return;
      let memo = byModel.get(model);
      if (!memo) byModel.set(model, (memo = new LRUCache({ max: maxItems })));
      memo.set(key, decoded);
    },
  };
}
