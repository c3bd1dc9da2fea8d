/**
 * Currencies change rarely and every transaction and payout points at one, so
 * the list is read with one upstream call and shared across requests for a
 * short time. Currencies belong to an account, so the cache is keyed by
 * caller (a hash of the key, never the key itself).
 */
import { LRUCache } from 'lru-cache';
import type { PaymentsApi } from '../upstream/api.js';
import type { CurrencyModel } from '../upstream/models.js';

export interface CurrencyCatalog {
  /** The caller's currencies, from the cache when fresh. */
  list(callerId: string, api: PaymentsApi): Promise<CurrencyModel[]>;
  clear(): void;
}

/** Bound on distinct callers kept, so a flood of keys cannot grow memory without end. */
const MAX_CALLERS = 10_000;

export function createCurrencyCatalog(ttlMs: number): CurrencyCatalog {
  // ttl 0 would mean "never expires" to lru-cache; here it means "do not cache".
  const entries = ttlMs > 0 ? new LRUCache<string, Promise<CurrencyModel[]>>({ max: MAX_CALLERS, ttl: ttlMs }) : null;
  return {
    list(callerId, api) {
      const cached = entries?.get(callerId);
      if (cached) return cached;
      const currencies = api.currencies.list();
      entries?.set(callerId, currencies);
      // A failed read is not cached: the next request tries again.
      currencies.catch(() => {
        if (entries?.get(callerId) === currencies) entries.delete(callerId);
      });
      return currencies;
    },
    clear() {
      entries?.clear();
    },
  };
}
