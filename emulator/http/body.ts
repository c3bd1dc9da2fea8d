/**
 * Request bodies and query strings: JSON, and form encoding with bracket keys
 * as some client libraries send them (`currency[iso]=XOF`, `payouts[][id]=1`,
 * `payouts[0][id]=1`), all values then being strings.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.js';

const MAX_BODY_BYTES = 1024 * 1024;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Container = Record<string, unknown> | unknown[];

function splitKey(key: string): string[] | undefined {
  const open = key.indexOf('[');
  if (open <= 0) return [key];
  const parts = [key.slice(0, open)];
  const re = /\[([^\]]*)\]/gy;
  re.lastIndex = open;
  let m: RegExpExecArray | null;
  let end = open;
  while ((m = re.exec(key)) !== null) {
    parts.push(m[1] ?? '');
    end = re.lastIndex;
  }
  // Trailing garbage after the brackets: treat the whole key literally.
  return end === key.length ? parts : undefined;
}

function isIndex(s: string): boolean {
  return /^\d{1,4}$/.test(s);
}

/** Whether `obj` already holds the full key path (Rails' rule for starting a new `[]` element). */
function hasPath(obj: unknown, path: string[]): boolean {
  let node = obj;
  for (const key of path) {
    if (key === '' || node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** The empty container a key path continues into: a list for `[]` or an index, else an object. */
function containerFor(nextKey: string): Container {
  return nextKey === '' || isIndex(nextKey) ? [] : {};
}

function assign(container: Container, parts: string[], value: string): void {
  const [head, ...rest] = parts;
  if (head === undefined || FORBIDDEN_KEYS.has(head)) return;
  if (Array.isArray(container) && head === '') {
    if (rest.length === 0) {
      container.push(value);
      return;
    }
    // Rails semantics for `a[][x]=1&a[][y]=2&a[][x]=3`: start a new element when the
    // last one already holds the next key.
    const last = container[container.length - 1];
    if (last !== null && typeof last === 'object' && !Array.isArray(last) && !hasPath(last, rest)) {
      assign(last as Record<string, unknown>, rest, value);
    } else {
      const fresh = containerFor(rest[0] ?? '');
      container.push(fresh);
      assign(fresh, rest, value);
    }
    return;
  }
  if (Array.isArray(container) && !isIndex(head)) return;
  // An index of a list and a key of an object are filled alike.
  const slots = container as Record<string | number, unknown>;
  const slot = Array.isArray(container) ? Number(head) : head;
  if (rest.length === 0) {
    slots[slot] = value;
    return;
  }
  let child = slots[slot];
  if (child === null || typeof child !== 'object') {
    child = containerFor(rest[0] ?? '');
    slots[slot] = child;
  }
  assign(child as Container, rest, value);
}

function compact(value: unknown): unknown {
  // `payouts[0][id]=1&payouts[2][id]=3` leaves holes; drop them.
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map(compact);
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) (value as Record<string, unknown>)[k] = compact(v);
  }
  return value;
}

/** Nested object from `key=value` pairs with bracket keys. */
export function parseBracketPairs(pairs: Iterable<[string, string]>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of pairs) {
    const parts = splitKey(key) ?? [key];
    assign(root, parts, value);
  }
  return compact(root) as Record<string, unknown>;
}

export function parseQuery(search: string): Record<string, unknown> {
  if (search === '') return {};
  return parseBracketPairs(new URLSearchParams(search));
}

export function readRawBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ApiError(413, 'Request body too large', { body: [`at most ${MAX_BODY_BYTES} bytes`] }));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 0 ? '' : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** JSON or form-encoded; an empty body is `{}`. */
export function parseBody(raw: string, contentType: string | undefined): unknown {
  if (raw.trim() === '') return {};
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/x-www-form-urlencoded') return parseBracketPairs(new URLSearchParams(raw));
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    if (type === '' && raw.includes('=')) return parseBracketPairs(new URLSearchParams(raw));
    throw new ApiError(400, 'The request body is not valid JSON', { body: ['invalid JSON'] });
  }
}
