/**
 * The `PaymentsApi` over HTTP, assembled: one transport, the guards shared by every caller, and
 * `forKey`, one caller's view of the endpoint table (a new endpoint is one line there).
 */
import type { PaymentsApi } from './api.js';
import { ByteBudget, DEFAULT_BYTE_BUDGET, type ByteBudgetOptions } from './byte-budget.js';
import { UpstreamCalls, type CallingKey } from './call.js';
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
  timeoutMs?: number;
  userAgent?: string;
  /** docs/architecture.md, "The upstream transport". */
  httpClient?: HttpClientName;
  /** Refused, not retried, above it. */
  maxResponseBytes?: number;
  bytesInFlight?: ByteBudgetOptions;
  resilience?: ResilienceOptions;
  /** Remember this many decoded items, so an unchanged object is validated once (decode-memo.ts). 0 or absent: none. */
  decodeMemoItems?: number;
}

export interface UpstreamClient {
  readonly httpClient: HttpClientName;
  /** The API as seen by one caller; cheap, no I/O: call it per request. */
  forKey(apiKey: string, scope: OperationScope): PaymentsApi;
  /** Circuit breaker state per route called so far (for /readyz). */
  breakerStates(): Record<string, BreakerState>;
  routeStats(): Record<string, RouteStats>;
  /** A later observer replaces this one. Returns the detach. */
  observe(observer: UpstreamObserver): () => void;
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

/** Made once for every caller: each verb reads its caller off the view it is read from. */
interface ResourceView {
  readonly calls: UpstreamCalls;
  readonly caller: CallingKey;
}

/** A verb is a method, never a closure made per operation. */
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

/** A resource is made on first use, so an operation pays only for the resources it reads. */
class KeyApi {
  readonly #views = new Map<string, ResourceView>();
  constructor(
    readonly calls: UpstreamCalls,
    readonly caller: CallingKey,
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
