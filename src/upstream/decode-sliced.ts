/**
 * A large answer's JSON, parsed in slices that give the event loop back (decode-turns.ts): the text
 * is scanned for its top-level structure, then each list item is parsed on its own with the same
 * exact-number rule as the whole body (decode.ts). Anything the scanner does not expect is parsed
 * whole, as before: slower for the others, never a different answer.
 */
import { checkItem, markLossless, parseExactJson, parseJsonBody, parsedLosslessly, type ResourceShape } from './decode.js';
import type { ListItem } from './params.js';
import type { DecodeTurns } from './decode-turns.js';
import { UpstreamInvalidResponseError, type UpstreamErrorInit } from './errors.js';

/** Smaller answers are parsed at once: their parse costs less than a turn. */
export const SLICED_FROM_CHARS = 512 * 1024;
/** Characters scanned between two looks at the clock. */
const SCAN_STEP = 256 * 1024;
/** A value this small is parsed in one go, even a list. */
const SPLIT_FROM_CHARS = 64 * 1024;

/** One slice's work: runs until its time is up; `yield` takes a turn when it is. */
export interface Slicer {
  /** True when the slice has run its time (the caller then awaits `next`). */
  due(): boolean;
  next(): Promise<void>;
}

export function slicerFor(turns: DecodeTurns, keyId: string): Slicer {
  let started = performance.now();
  return {
    due: () => performance.now() - started >= turns.sliceMs,
    next: async () => {
      await turns.turn(keyId);
      started = performance.now();
    },
  };
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Structural characters at depth 1 and 2 (the body, and a value in it): positions and codes, side by side. */
interface Skeleton {
  at: number[];
  code: number[];
  depth: number[];
}

async function scan(text: string, slicer: Slicer): Promise<Skeleton | null> {
  const out: Skeleton = { at: [], code: [], depth: [] };
  let depth = 0;
  let inString = false;
  // One index across steps: an escape at a step's end skips the first character of the next.
  let i = 0;
  while (i < text.length) {
    if (slicer.due()) await slicer.next();
    const to = Math.min(text.length, i + SCAN_STEP);
    for (; i < to; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) inString = false;
        continue;
      }
      if (c === QUOTE) inString = true;
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        depth++;
        if (depth <= 2) note(out, i, c, depth);
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (depth <= 2) note(out, i, c, depth);
        depth--;
        if (depth < 0) return null;
      } else if ((c === COMMA || c === COLON) && depth <= 2) note(out, i, c, depth);
    }
  }
  return depth === 0 && !inString ? out : null;
}

function note(out: Skeleton, at: number, code: number, depth: number): void {
  out.at.push(at);
  out.code.push(code);
  out.depth.push(depth);
}

/** The body as `parseJsonBody` would make it, in slices; throws its error on text that is not JSON. */
export async function parseJsonBodySliced(text: string, what: string, ctx: UpstreamErrorInit, slicer: Slicer): Promise<unknown> {
  const whole = (): unknown => parseJsonBody(text, what, ctx);
  const skeleton = await scan(text, slicer);
  if (skeleton === null || skeleton.at.length === 0) return whole();
  const { at, code, depth } = skeleton;
  const first = at[0]!;
  const last = at[at.length - 1]!;
  // Only whitespace around the body's brackets, and the brackets match.
  if (!BLANK.test(text.slice(0, first)) || !BLANK.test(text.slice(last + 1))) return whole();
  if (depth[at.length - 1] !== 1 || code[at.length - 1] !== (code[0] === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return whole();
  try {
    if (code[0] === OPEN_ARRAY) return await elements(text, skeleton, 0, at.length - 1, 1, slicer);
    if (code[0] === OPEN_OBJECT) return await members(text, skeleton, slicer);
  } catch (error) {
    if (error instanceof NotJson) throw new UpstreamInvalidResponseError({ ...ctx, detail: `${what} body is not JSON` });
    throw error;
  }
  return whole();
}

class NotJson extends Error {}

/** JSON's own whitespace: `trim` would take more (a byte-order mark) than JSON.parse does. */
const BLANK = /^[ \t\n\r]*$/;

/** One piece, parsed inside brackets so a bare number token is checked as in the whole body; marked when exact numbers needed the lossless parse. */
function parsed(piece: string): unknown {
  let wrapper: unknown;
  try {
    wrapper = parseExactJson(`[${piece}]`);
  } catch {
    throw new NotJson();
  }
  // An empty piece (`[1,,2]`, a trailing comma) makes no item: not JSON, as the whole body is not.
  if (!Array.isArray(wrapper) || wrapper.length !== 1) throw new NotJson();
  const value: unknown = wrapper[0];
  if (parsedLosslessly(wrapper)) markLossless(value);
  return value;
}

/** The items of the list opened at record `open` and closed at record `close` (its commas at `level`). */
async function elements(text: string, { at, code, depth }: Skeleton, open: number, close: number, level: number, slicer: Slicer): Promise<unknown[]> {
  const items: unknown[] = [];
  const bounds: number[] = [];
  for (let r = open + 1; r < close; r++) if (code[r] === COMMA && depth[r] === level) bounds.push(r);
  bounds.push(close);
  // `[]` and `[ ]` have no item.
  if (bounds.length === 1 && BLANK.test(text.slice(at[open]! + 1, at[close]))) return items;
  let start = at[open]! + 1;
  for (const r of bounds) {
    if (slicer.due()) await slicer.next();
    items.push(parsed(text.slice(start, at[r])));
    start = at[r]! + 1;
  }
  return items;
}

/** The body's object, each large list value in slices; a repeated key keeps its last value, as JSON.parse does. */
async function members(text: string, skeleton: Skeleton, slicer: Slicer): Promise<Record<string, unknown>> {
  const { at, code, depth } = skeleton;
  const body: Record<string, unknown> = {};
  const end = at.length - 1;
  if (end === 1) {
    if (BLANK.test(text.slice(at[0]! + 1, at[end]))) return body;
    throw new NotJson();
  }
  let r = 0;
  while (r < end) {
    // A key: from this separator to the next colon at depth 1.
    let colon = r + 1;
    while (colon < end && !(depth[colon] === 1 && code[colon] === COLON)) colon++;
    if (colon >= end) throw new NotJson();
    const key = parsed(text.slice(at[r]! + 1, at[colon]));
    if (typeof key !== 'string') throw new NotJson();
    // Its value: to the next comma at depth 1, or the closing bracket.
    let stop = colon + 1;
    while (stop < end && !(depth[stop] === 1 && code[stop] === COMMA)) stop++;
    const from = at[colon]! + 1;
    const to = at[stop]!;
    const opener = colon + 1;
    const close = stop - 1;
    const isList = opener < stop && code[opener] === OPEN_ARRAY && depth[opener] === 2 && BLANK.test(text.slice(from, at[opener]));
    let value: unknown;
    if (isList && to - from >= SPLIT_FROM_CHARS && code[close] === CLOSE_ARRAY && depth[close] === 2 && BLANK.test(text.slice(at[close]! + 1, to))) {
      value = await elements(text, skeleton, opener, close, 2, slicer);
    } else {
      if (slicer.due()) await slicer.next();
      value = parsed(text.slice(from, to));
    }
    // Defined, not assigned: a `__proto__` key is a field, as JSON.parse makes it.
    Object.defineProperty(body, key, { value, enumerable: true, writable: true, configurable: true });
    r = stop;
  }
  return body;
}

/** Each item checked as decodeList and decodePage check it, a slice at a time; `body`: the list's (parsed whole when the scanner passed it over). */
export async function checkItemsSliced<T>(body: unknown, list: readonly unknown[], shape: ResourceShape<T>, ctx: UpstreamErrorInit, slicer: Slicer): Promise<ListItem<T>[]> {
  const lossless = parsedLosslessly(body);
  const items: ListItem<T>[] = new Array<ListItem<T>>(list.length);
  for (let i = 0; i < list.length; i++) {
    if (slicer.due()) await slicer.next();
    items[i] = checkItem(list[i], shape, i, ctx, lossless);
  }
  return items;
}
