/** Public surface of the upstream REST client. */
export type * from './api.js';
export * from './errors.js';
export { createUpstreamClient } from './client.js';
export { everyItem } from './decode.js';
export type { UpstreamClient, UpstreamClientOptions } from './client.js';
export { routeLabel, DEFAULT_TIMEOUT_MS, MODE_PATTERN, UNGATED } from './operation-scope.js';
export type { HttpMethod, OperationGate, OperationScope } from './operation-scope.js';
export { HTTP_CLIENTS, MAX_RESPONSE_BYTES } from './transport.js';
export type { HttpClientName } from './transport.js';
export { Bulkhead, DEFAULT_RESILIENCE, RetryBudget } from './resilience.js';
export type { BreakerOptions, BreakerState, ResilienceOptions, RetryOptions } from './resilience.js';
export * from './models.js';
export type { AttemptResult, AttemptStart, AttemptWatch, RouteStats, UpstreamObserver } from './observer.js';
export { keyId } from './key-id.js';
