/**
 * Per-request GraphQL context: the caller's upstream client and DataLoaders.
 * Built once per operation by the HTTP layer (server.ts); nothing in it
 * outlives the request except the shared caches it points at.
 */
import type { PaymentsApi } from './upstream/api.js';
import type { Loaders } from './loaders/index.js';
import type { PaginationLimits } from './pagination.js';
import type { Logger } from './logger.js';
import type { CurrencyCatalog } from './loaders/currency-catalog.js';
import type { RealtimeSource } from './realtime/subscriptions.js';
import type { IdempotencyScope } from './idempotency/index.js';

export interface Context {
  /** Upstream client bound to the caller's own API key. */
  api: PaymentsApi;
  loaders: Loaders;
  /** Hash of the caller's key: the scope of caches and records. */
  callerId: string;
  pagination: PaginationLimits;
  logger: Logger;
  /** Currencies shared across requests for a short time (per caller). */
  currencyCatalog: CurrencyCatalog;
  /** Only on GraphQL-over-WebSocket operations: the caller's live events. */
  realtime?: RealtimeSource;
  /** Idempotency records for keyed mutations (HTTP operations); see src/idempotency. */
  idempotency?: IdempotencyScope;
}

/** The largest `per_page` the upstream honours (src/emulator/README.md, FedaPay clients). */
export const UPSTREAM_MAX_PER_PAGE = 100;
