/**
 * Per-request GraphQL context: the caller's upstream client and DataLoaders.
 * Built once per operation by the HTTP layer (see server.ts); nothing in it
 * outlives the request except the shared caches it points at.
 */
import type { PaymentsApi } from './upstream/api.js';
import type { Loaders } from './loaders/index.js';

export interface Context {
  /** Upstream client bound to the caller's own API key. */
  api: PaymentsApi;
  loaders: Loaders;
}
