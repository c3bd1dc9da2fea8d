/**
 * A /v1 answer on the wire. A small one goes whole, with its length, as always. A large one (a page of
 * metadata-heavy rows) is written piece by piece: each list item serialised on its own and written when
 * the socket takes it, so the emulator holds about one item of the page at a time and serves its other
 * requests between pieces. Serialised whole, six 100 MB pages in flight ran it out of memory, and each
 * page's serialisation stalled every other tenant's reads behind it.
 */
import { getHeapStatistics } from 'node:v8';
import type { ServerResponse } from 'node:http';

/** Answers this large (in characters) and larger are streamed. */
export const STREAM_FROM_CHARS = 1024 * 1024;
/** Pieces are gathered to about this size before a write: fewer writes, still small next to a page. */
const WRITE_CHARS = 64 * 1024;
/** A large answer is refused when the heap is this full when it starts: the margin the collector needs. */
export const HEAP_REFUSAL_SHARE = 0.9;

const JSON_TYPE = 'application/json; charset=utf-8';

/** The JSON text of `body` in order, a list item or a member's value at a time; joined, exactly JSON.stringify(body). */
export function* jsonPieces(body: unknown): Generator<string> {
  if (Array.isArray(body)) {
    yield* itemPieces(body);
    return;
  }
  if (!isPlainObject(body)) {
    yield JSON.stringify(body) ?? 'null';
    return;
  }
  let first = true;
  yield '{';
  for (const [key, value] of Object.entries(body)) {
    // JSON.stringify leaves these members out.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (Array.isArray(value)) yield* itemPieces(value);
    else yield JSON.stringify(value);
  }
  yield '}';
}

/** A list, an item at a time: an item is one row, which the emulator's 1 MiB request bodies keep small next to a page. */
function* itemPieces(list: readonly unknown[]): Generator<string> {
  yield '[';
  for (let i = 0; i < list.length; i++) {
    // A hole or an undefined item is `null` in a list, as JSON.stringify writes it.
    const text = JSON.stringify(list[i]) ?? 'null';
    yield i === 0 ? text : `,${text}`;
  }
  yield ']';
}

/** Objects JSON.stringify writes member by member (no toJSON, no class of their own). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/** A string of its own: a slice of a large text would keep the whole text alive as long as the slice lives. */
export function ownCopy(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

export interface SendOptions {
  headers?: Record<string, string>;
  /** How much of a streamed answer to hand back (for the request log); a whole answer is handed back whole. */
  keepChars: number;
  /** The heap's fill, 0 to 1 (tests); V8's figures by default. */
  heapShare?: () => number;
}

export function heapShare(): number {
  const { used_heap_size: used, heap_size_limit: limit } = getHeapStatistics();
  return used / limit;
}

/**
 * Sends `body`; resolves with its text, or for a streamed answer with its first `keepChars + 1`
 * characters (so a log that cuts at `keepChars` marks it cut), or with the refusal's text.
 */
export async function sendReply(res: ServerResponse, status: number, body: unknown, options: SendOptions): Promise<string> {
  const pieces = jsonPieces(body);
  const head: string[] = [];
  let chars = 0;
  for (let next = pieces.next(); !next.done; next = pieces.next()) {
    head.push(next.value);
    chars += next.value.length;
    if (chars >= STREAM_FROM_CHARS) return stream(res, status, head, pieces, options);
  }
  const text = head.join('');
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), ...options.headers });
  res.end(text);
  return text;
}

async function stream(res: ServerResponse, status: number, head: string[], rest: Iterator<string>, options: SendOptions): Promise<string> {
  if ((options.heapShare ?? heapShare)() >= HEAP_REFUSAL_SHARE) return refuse(res);
  // No content-length: the answer's size is known only once written (chunked transfer).
  res.writeHead(status, { 'content-type': JSON_TYPE, ...options.headers });
  let kept = '';
  let batch: string[] = [];
  let batchChars = 0;
  const take = async (piece: string): Promise<boolean> => {
    if (kept.length <= options.keepChars) kept += piece.slice(0, options.keepChars + 1 - kept.length);
    batch.push(piece);
    batchChars += piece.length;
    if (batchChars < WRITE_CHARS) return true;
    const text = batch.join('');
    batch = [];
    batchChars = 0;
    return res.write(text) || drained(res);
  };
  for (const piece of head) if (!(await take(piece))) return ownCopy(kept);
  for (let next = rest.next(); !next.done; next = rest.next()) if (!(await take(next.value))) return ownCopy(kept);
  res.end(batch.join(''));
  return ownCopy(kept);
}

/** True once the socket takes more; false when the caller went away meanwhile. */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (more: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(more);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** The code the gateway reads as a size refusal (charged to the key, never the route): ask for fewer rows, or later. */
function refuse(res: ServerResponse): string {
  const text = JSON.stringify({
    code: 'page_too_large',
    message: 'This answer is too large for the emulator\'s memory now: ask for fewer rows (per_page), or retry later',
    errors: { per_page: ['ask for fewer rows'] },
  });
  res.writeHead(503, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), 'retry-after': '1' });
  res.end(text);
  return text;
}
