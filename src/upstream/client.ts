/**
 * The `PaymentsApi` over HTTP, assembled: one transport (got or node:http,
 * transport.ts), the route and key guards (resilience.ts) shared by every
 * caller, and the call chain over them (call.ts). `forKey` gives one
 * caller's view of every endpoint of the table (endpoints.ts): verbs are
 * methods made once per resource, a view per operation holds only the
 * caller, so a new endpoint is one line there.
 */
import type { PaymentsApi } from './api.js';
import { ByteBudget, DEFAULT_BYTE_BUDGET, type ByteBudgetOptions } from './byte-budget.js';
import { UpstreamCalls, type Caller } from './call.js';
import { createDecodeMemo } from './decode-memo.js';
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import { DEFAULT_TIMEOUT_MS, parseBaseUrl, type OperationScope } from './operation-scope.js';
import type { RouteStats, UpstreamObserver } from './observer.js';
import { DEFAULT_RESILIENCE, RouteGuards, type BreakerState, type ResilienceOptions } from './resilience.js';
import type { HttpClientName } from './transport.js';
import { createGotTransport } from './transport-got.js';
import { createNodeTransport } from './transport-node.js';

export interface UpstreamClientOptions {
  /** e.g. `https://sandbox-api.example.com` (a path prefix is kept); paths start with `/v1`. */
  baseUrl: string;
  /** Whole-request time-out of one attempt, connection included. Default 10 s. */
  timeoutMs?: number;
  userAgent?: string;
  /**
   * What sends each request: `got` (the default, the project's first client) or `node`
   * (bare node:http, about 5x less CPU per call). Same time-outs, aborts and
   * errors, the same answer-size cap, and neither asks for compression (transport.ts).
   */
  httpClient?: HttpClientName;
  /** An answer longer than this many bytes is refused, not retried (transport.ts, MAX_RESPONSE_BYTES by default). */
  maxResponseBytes?: number;
  /** Answer bytes read and not yet decoded, all keys and per key (byte-budget.ts); DEFAULT_BYTE_BUDGET when absent. */
  bytesInFlight?: ByteBudgetOptions;
  /** Retries, retry budget, breakers and bulkheads (resilience.ts); defaults in DEFAULT_RESILIENCE. */
  resilience?: ResilienceOptions;
  /** Remember this many decoded items, so an unchanged object is validated once (decode-memo.ts). 0 or absent: none. */
  decodeMemoItems?: number;
}

export interface UpstreamClient {
  /** The transport in use (UpstreamClientOptions.httpClient). */
  readonly httpClient: HttpClientName;
  /** The API as seen by one caller; cheap, no I/O: call it per request. */
  forKey(apiKey: string, scope: OperationScope): PaymentsApi;
  /** Circuit breaker state per route called so far (for /readyz). */
  breakerStates(): Record<string, BreakerState>;
  /** Breaker state and bulkhead occupancy per route called so far (for metrics). */
  routeStats(): Record<string, RouteStats>;
  /**
   * Attaches the one observer of every call (the gateway's metrics and
   * traces); a later one replaces it. Returns a function that detaches it.
   */
  observe(observer: UpstreamObserver): () => void;
  /** Closes the pooled keep-alive sockets and stops the breakers' timers. */
  close(): void;
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const baseUrl = parseBaseUrl(options.baseUrl);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const httpClient = options.httpClient ?? 'got';
  const transportOptions = {
    timeoutMs,
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
    ...(options.maxResponseBytes ? { maxResponseBytes: options.maxResponseBytes } : {}),
  };
  const transport = httpClient === 'node' ? createNodeTransport(transportOptions) : createGotTransport(transportOptions);
  const guards = new RouteGuards(options.resilience ?? DEFAULT_RESILIENCE);
  const memo = options.decodeMemoItems ? createDecodeMemo(options.decodeMemoItems) : undefined;
  const bytes = new ByteBudget(options.bytesInFlight ?? DEFAULT_BYTE_BUDGET);
  const calls = new UpstreamCalls({ transport, guards, baseUrl, callTimeoutMs: timeoutMs, memo, bytes });
  return {
    httpClient,
    forKey: (apiKey, scope) => new KeyApi(calls, { apiKey, scope }) as unknown as PaymentsApi,
    breakerStates: () => guards.breakerStates(),
    routeStats: () => guards.routeStats(),
    observe(next) {
      calls.observer = next;
      return () => {
        if (calls.observer !== next) return;
        calls.observer = undefined;
      };
    },
    close: () => {
      guards.close();
      transport.close();
    },
  };
}

/** One resource's verbs, made once for every caller: each reads its caller and calls off the view it is read from. */
interface ResourceView {
  readonly calls: UpstreamCalls;
  readonly caller: Caller;
}

/** One prototype per resource, built once from the table: a verb is a method, never a closure made per operation. */
const RESOURCE_PROTOTYPES = Object.fromEntries(
  Object.entries(ENDPOINTS).map(([resource, verbs]) => {
    const proto: Record<string, (this: ResourceView, ...args: unknown[]) => Promise<unknown>> = {};
    for (const [verb, endpoint] of Object.entries(verbs) as [string, Endpoint][]) {
      proto[verb] = function (this: ResourceView, ...args: unknown[]) {
        return this.calls.call(this.caller, endpoint, args);
      };
    }
    return [resource, proto];
  }),
);

/**
 * The API as one caller sees it: a resource is made on first use, an object of two fields
 * over its prototype, so an operation that reads transactions pays for that resource alone.
 */
class KeyApi {
  readonly #views = new Map<string, ResourceView>();
  constructor(
    readonly calls: UpstreamCalls,
    readonly caller: Caller,
  ) {}

  static {
    for (const resource of Object.keys(RESOURCE_PROTOTYPES)) {
      Object.defineProperty(KeyApi.prototype, resource, {
        get(this: KeyApi) {
          let view = this.#views.get(resource);
          if (view === undefined) {
            view = Object.assign(Object.create(RESOURCE_PROTOTYPES[resource]!) as object, { calls: this.calls, caller: this.caller });
            this.#views.set(resource, view);
          }
          return view;
        },
        enumerable: true,
      });
    }
  }
}
