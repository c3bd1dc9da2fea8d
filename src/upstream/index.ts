/** Public surface of the upstream REST client. */
export type * from './api.js';
export * from './errors.js';
export { createUpstreamClient, routeLabel, DEFAULT_TIMEOUT_MS } from './client.js';
export type { HttpMethod, UpstreamClient, UpstreamClientOptions } from './client.js';
export * from './models.js';
