/**
 * What one operation imposes on its calls (its scope), and the checks made before any I/O:
 * the URL built with its ids validated, the body's ids, the API key. The operation's budget and
 * key guard wrap the client from outside (access/upstream-budget.ts): the client holds no policy.
 */
import type { WireRequest } from './endpoints.js';
import { UpstreamAuthenticationError, UpstreamValidationError } from './errors.js';
import type { HttpMethod } from './transport.js';

export interface OperationScope {
  /** Epoch ms: no attempt starts, and no retry waits, past it; an attempt's time-out shrinks to fit. */
  deadlineAt?: number;
  signal?: AbortSignal;
  /** Sent as `x-request-id` on every call, so the upstream's logs join ours. */
  requestId?: string;
  /** Opaque to the client; handed back to the observer. */
  observed?: unknown;
  /** The key's hash (key-id.ts) when the caller has made it already (access/auth.ts), so no call makes it again. */
  keyId?: string;
  /** Told the size of each answer of PRICED_FROM_CHARS or more once decoded, so the operation can pay for it (access/upstream-budget.ts). */
  onLargeAnswer?: (chars: number) => void;
}

/** Answers this large (in characters of their text: bytes, for JSON's usual ASCII) tell their size. */
export const PRICED_FROM_CHARS = 1024 * 1024;

/** The scope of the gateway's own reads (a key's proof, its account, a subscriber's re-read): no operation's deadline. */
export const NO_OPERATION: OperationScope = Object.freeze({});

export type { HttpMethod } from './transport.js';

export function routeLabel(method: HttpMethod, pattern: string): string {
  return `${method} ${pattern}`;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/** Path segment of the send step (docs/upstream.md, Operations: mtn, moov, mtn_ci, moov_tg, mtn_open). */
export const MODE_PATTERN = /^[a-z0-9_]+$/;
/** Printable ASCII without spaces: anything else cannot travel in a header. */
const API_KEY_PATTERN = /^[\x21-\x7e]+$/;

/** The one place a URL is built, so no path id escapes validation. */
export function buildUrl(baseUrl: URL, pattern: string, request: WireRequest, route: string): URL {
  const path = pattern.replace(/:([a-zA-Z]+)/g, (_match, name: string) => encodeURIComponent(pathSegment(name, request.path?.[name], route)));
  const url = new URL(prefixOf(baseUrl) + path);
  for (const [key, value] of Object.entries(request.query ?? {})) {
    if (value === undefined) continue;
    if (typeof value === 'number') requirePositiveInt(key, value, route);
    url.searchParams.append(key, String(value));
  }
  return url;
}

/** Once per client's URL rather than once per call. */
const prefixes = new WeakMap<URL, string>();
function prefixOf(baseUrl: URL): string {
  let prefix = prefixes.get(baseUrl);
  if (prefix === undefined) prefixes.set(baseUrl, (prefix = baseUrl.href.replace(/\/+$/, '')));
  return prefix;
}

export function checkBodyIds(bodyIds: Record<string, unknown> | undefined, route: string): void {
  for (const [field, id] of Object.entries(bodyIds ?? {})) {
    if (id !== undefined) requirePositiveInt(field, id, route);
  }
}

/** A key that cannot travel in a header is refused as the upstream would refuse it, without a call. */
export function checkApiKey(apiKey: string, route: string): void {
  if (!API_KEY_PATTERN.test(apiKey)) throw new UpstreamAuthenticationError({ route });
}

function pathSegment(name: string, value: unknown, route: string): string {
  if (name === 'mode') {
    if (typeof value === 'string' && MODE_PATTERN.test(value)) return value;
    throw invalidParam('mode', 'must be lower-case letters, digits or underscores', route);
  }
  return String(requirePositiveInt(name, value, route));
}

function requirePositiveInt(field: string, value: unknown, route: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw invalidParam(field, 'must be a positive integer', route);
}

function invalidParam(field: string, message: string, route: string): UpstreamValidationError {
  return new UpstreamValidationError({ route, fieldErrors: { [field]: [message] } });
}

export function parseBaseUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Upstream baseUrl must be http or https, got ${url.protocol}`);
  }
  return url;
}
