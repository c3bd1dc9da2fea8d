/**
 * The `PaymentsApi` over HTTP, assembled: one transport (got or node:http,
 * transport.ts), the calls over it (http.ts) and one
 * set of resilience rules (resilience.ts) shared by every caller, bound per
 * caller to that caller's API key with `forKey`. Each resource file under
 * resources/ holds its routes and body builders, so a new endpoint touches
 * that file and the interface in api.ts.
 */
import { keyId } from './key-id.js';
import type { PaymentsApi } from './api.js';
import { DEFAULT_TIMEOUT_MS, parseBaseUrl, request, type OperationScope } from './http.js';
import type { HttpClientName } from './transport.js';
import { createGotTransport } from './transport-got.js';
import { createNodeTransport } from './transport-node.js';
import { DEFAULT_RESILIENCE, Resilience, type BreakerState, type ResilienceOptions } from './resilience.js';
import type { RouteStats, UpstreamObserver } from './observer.js';
import { createDecodeMemo } from './decode-memo.js';
import { accounts } from './resources/accounts.js';
import { currencies } from './resources/currencies.js';
import { customers } from './resources/customers.js';
import { events } from './resources/events.js';
import { createFetch } from './resources/fetch.js';
import { logs } from './resources/logs.js';
import { payouts } from './resources/payouts.js';
import { transactions } from './resources/transactions.js';
import { webhooks } from './resources/webhooks.js';

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
  /** Retries, retry budget, breakers and bulkheads (resilience.ts); defaults in DEFAULT_RESILIENCE. */
  resilience?: ResilienceOptions;
  /** Remember this many decoded items, so an unchanged object is validated once (decode-memo.ts). 0 or absent: none. */
  decodeMemoItems?: number;
}

export interface UpstreamClient {
  /** The transport in use (UpstreamClientOptions.httpClient). */
  readonly httpClient: HttpClientName;
  /** The API as seen by one caller; cheap, no I/O: call it per request. */
  forKey(apiKey: string, scope?: OperationScope): PaymentsApi;
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
  const resilience = new Resilience(options.resilience ?? DEFAULT_RESILIENCE, timeoutMs);
  const memo = options.decodeMemoItems ? createDecodeMemo(options.decodeMemoItems) : undefined;
  return {
    httpClient,
    forKey(apiKey, scope = {}) {
      // Made on use, as the resources below: an operation the entity cache answers makes no call.
      let caller: string | undefined;
      const callerOf = () => (caller ??= keyId(apiKey));
      const fetch = createFetch((call, opts) => request(transport, resilience, { baseUrl, apiKey, caller: callerOf(), scope, observer: resilience.observer }, call, opts), memo);
      const made: Partial<PaymentsApi> = {};
      return {
        get transactions() {
          return (made.transactions ??= transactions(fetch));
        },
        get payouts() {
          return (made.payouts ??= payouts(fetch));
        },
        get customers() {
          return (made.customers ??= customers(fetch));
        },
        get currencies() {
          return (made.currencies ??= currencies(fetch));
        },
        get webhooks() {
          return (made.webhooks ??= webhooks(fetch));
        },
        get events() {
          return (made.events ??= events(fetch));
        },
        get logs() {
          return (made.logs ??= logs(fetch));
        },
        get accounts() {
          return (made.accounts ??= accounts(fetch));
        },
      };
    },
    breakerStates: () => resilience.breakerStates(),
    routeStats: () => resilience.routeStats(),
    observe(next) {
      resilience.observer = next;
      return () => {
        if (resilience.observer !== next) return;
        resilience.observer = undefined;
      };
    },
    close: () => {
      resilience.close();
      transport.close();
    },
  };
}
