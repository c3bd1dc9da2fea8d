/**
 * Currencies change rarely and every transaction and payout points at one, so
 * the list is read with one upstream call and shared across requests for a
 * short time. Currencies belong to an account, so the cache is keyed by
 * caller (a hash of the key, never the key itself).
 */
import type { PaymentsApi } from '../upstream/api.js';
import type { CurrencyModel } from '../upstream/models.js';

export interface CurrencyCatalog {
  /** The caller's currencies, from the cache when fresh. */
  list(callerId: string, api: PaymentsApi): Promise<CurrencyModel[]>;
  clear(): void;
}

interface Entry {
  expiresAt: number;
  currencies: Promise<CurrencyModel[]>;
}

/** Bound on distinct callers kept, so a flood of keys cannot grow memory without end. */
const MAX_CALLERS = 10_000;

export function createCurrencyCatalog(ttlMs: number, now: () => number = Date.now): CurrencyCatalog {
  const entries = new Map<string, Entry>();
  return {
    list(callerId, api) {
      const cached = entries.get(callerId);
      if (cached && cached.expiresAt > now()) return cached.currencies;
      const currencies = api.currencies.list();
      const entry = { expiresAt: now() + ttlMs, currencies };
      entries.delete(callerId);
      if (entries.size >= MAX_CALLERS) entries.delete(entries.keys().next().value!);
      entries.set(callerId, entry);
      // A failed read is not cached: the next request tries again.
      currencies.catch(() => {
        if (entries.get(callerId) === entry) entries.delete(callerId);
      });
      return currencies;
    },
    clear() {
      entries.clear();
    },
  };
}
