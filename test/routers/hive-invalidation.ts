/**
 * Two Hive Gateway plugins that make its response cache (`responseCaching`)
 * keep what the payments subgraph says about its answers (docs/routers.md,
 * "Hive Gateway"). Plain TypeScript with no imports from Hive: a
 * gateway.config.ts can copy this file whole.
 *
 * - `usePaymentsNoStore`: Hive's response cache reads only `max-age` and
 *   `s-maxage` from a subgraph's Cache-Control. The gateway answers `no-store`
 *   for anything it must not be kept (lists, a transaction not final, errors),
 *   which Hive would keep for its default TTL; read it as `max-age=0`.
 * - `useRouterInvalidation`: the gateway pushes each change to
 *   ROUTER_INVALIDATION_URL in Apollo Router's shape
 *   (`[{"kind":"cache_tag","subgraphs":["payments"],"cache_tag":"transaction-42"}]`,
 *   the shared key as the whole Authorization header). Hive has no such
 *   endpoint; this serves it and drops every cached answer holding that
 *   entity (`Transaction` with id 42).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The cache Hive's response cache stores in (the gateway config's `cache`, given to plugins as `ctx.cache`). */
export interface HiveKeyValueCache {
  getKeysByPrefix(prefix: string): string[] | Promise<string[]>;
  delete(key: string): unknown;
}

interface FetchHookPayload {
  executionRequest?: unknown;
  fetchFn: (...args: unknown[]) => Promise<Response> | Response;
  setFetchFn(fn: (...args: unknown[]) => Promise<Response>): void;
}

interface RequestHookPayload {
  request: Request;
  url: URL;
  endResponse(response: Response): void;
}

const NO_STORE = /(^|,)\s*no-store\s*(,|$)/i;
const MAX_AGE = /(^|,)\s*(s-)?max-age\s*=/i;

export function usePaymentsNoStore() {
  return {
    onFetch({ executionRequest, fetchFn, setFetchFn }: FetchHookPayload) {
      // Subgraph calls only (not Hive's own fetches, such as a supergraph download).
      if (!executionRequest) return;
      setFetchFn(async (...args) => {
        const response = await fetchFn(...args);
        const cacheControl = response.headers.get('cache-control');
        if (!cacheControl || !NO_STORE.test(cacheControl) || MAX_AGE.test(cacheControl)) return response;
        const headers = new Headers(response.headers);
        headers.set('cache-control', `${cacheControl}, max-age=0`);
        return new Response(await response.text(), { status: response.status, statusText: response.statusText, headers });
      });
    },
  };
}

export interface RouterInvalidationOptions {
  /** The cache the response cache stores in. */
  cache: HiveKeyValueCache;
  /** The gateway's ROUTER_INVALIDATION_KEY: the whole Authorization header it sends. */
  key: string;
  /** The path of ROUTER_INVALIDATION_URL on Hive's address. */
  path?: string;
  /** The subgraph's name in the supergraph. */
  subgraph?: string;
}

/** The payments entities the gateway tags (`transaction-42`), by their GraphQL type name. */
const TAGGED: Readonly<Record<string, string>> = { transaction: 'Transaction', payout: 'Payout', customer: 'Customer' };
const TAG = /^([a-z]+)-([1-9][0-9]{0,15})$/;
/** The gateway pushes one change per request; a larger body is not from it. */
const MAX_BODY_BYTES = 64 * 1024;
const MAX_TAGS = 1_000;

interface CacheTagInvalidation {
  kind?: unknown;
  subgraphs?: unknown;
  cache_tag?: unknown;
}

export function useRouterInvalidation(options: RouterInvalidationOptions) {
  const path = options.path ?? '/invalidation';
  const subgraph = options.subgraph ?? 'payments';
  const expected = digest(options.key);
  const answer = (status: number, body: Record<string, unknown>) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  /** Every response the cache holds with this entity, as @graphql-mesh/plugin-response-cache lays them out. */
  const drop = async (typename: string, id: string): Promise<number> => {
    const entry = `response-cache:${typename}.${id}:`;
    const keys = await options.cache.getKeysByPrefix(entry);
    for (const key of keys) {
      await options.cache.delete(key);
      await options.cache.delete(`response-cache:${key.slice(entry.length)}`);
    }
    return keys.length;
  };

  const handle = async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') return answer(405, { error: 'POST only' });
    if (!timingSafeEqual(digest(request.headers.get('authorization') ?? ''), expected)) return answer(401, { error: 'invalid key' });
    if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) return answer(413, { error: `body over ${MAX_BODY_BYTES} bytes` });
    const text = await readCapped(request, MAX_BODY_BYTES);
    if (text === null) return answer(413, { error: `body over ${MAX_BODY_BYTES} bytes` });
    let items: CacheTagInvalidation[];
    try {
      items = JSON.parse(text) as CacheTagInvalidation[];
    } catch {
      return answer(400, { error: 'body is not JSON' });
    }
    if (!Array.isArray(items) || items.length > MAX_TAGS) return answer(400, { error: `expected an array of at most ${MAX_TAGS} invalidations` });
    const entities: [string, string][] = [];
    for (const item of items) {
      const tag = typeof item?.cache_tag === 'string' ? TAG.exec(item.cache_tag) : null;
      const typename = tag ? TAGGED[tag[1]!] : undefined;
      const forSubgraph = Array.isArray(item?.subgraphs) && item.subgraphs.includes(subgraph);
      if (item?.kind !== 'cache_tag' || !forSubgraph || !tag || !typename) {
        return answer(400, { error: `expected {"kind":"cache_tag","subgraphs":["${subgraph}"],"cache_tag":"transaction-<id>"}` });
      }
      entities.push([typename, tag[2]!]);
    }
    let count = 0;
    for (const [typename, id] of entities) count += await drop(typename, id);
    return answer(200, { count });
  };

  return {
    async onRequest({ request, url, endResponse }: RequestHookPayload) {
      if (url.pathname === path) endResponse(await handle(request));
    },
  };
}

/** The body as text, read a chunk at a time and given up (null) once past `max` bytes: a larger one is never held whole. */
async function readCapped(request: Request, max: number): Promise<string | null> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > max) {
      void reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
