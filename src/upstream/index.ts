/** Public surface of the upstream REST client. */
export type * from './api.js';
export * from './errors.js';
export { createUpstreamClient, routeLabel, DEFAULT_TIMEOUT_MS } from './client.js';
export type { HttpMethod, OperationScope, UpstreamClient, UpstreamClientOptions } from './client.js';
export { Bulkhead, DEFAULT_RESILIENCE, RetryBudget } from './resilience.js';
export type { BreakerOptions, BreakerState, ResilienceOptions, RetryOptions } from './resilience.js';
export * from './models.js';
