/**
 * Per-request DataLoaders over the upstream client (graphql/dataloader README:
 * one set per request, values in key order, `null` for a miss, an Error for a
 * failure). The REST API has no batch read, so a batch becomes parallel reads
 * of its distinct ids; what the loaders buy is that every id is read at most
 * once per request, whoever asks for it, and that lists prime them. Under the
 * loaders of customers, transactions, payouts and currencies sits the entity
 * cache (src/cache): a batch asks it first and the upstream for the rest.
 */
import DataLoader from 'dataloader';
import type { Id, PaymentsApi } from '../upstream/api.js';
import { UpstreamNotFoundError } from '../upstream/errors.js';
import type {
  CurrencyModel,
  CustomerModel,
  EventModel,
  LogModel,
  PayoutModel,
  TransactionModel,
  WebhookModel,
} from '../upstream/models.js';
import type { EntityCacheScope, EntityKind, EntityModels } from '../cache/index.js';

export interface Loaders {
  transaction: DataLoader<Id, TransactionModel | null>;
  payout: DataLoader<Id, PayoutModel | null>;
  customer: DataLoader<Id, CustomerModel | null>;
  webhook: DataLoader<Id, WebhookModel | null>;
  event: DataLoader<Id, EventModel | null>;
  log: DataLoader<Id, LogModel | null>;
  currencyById: DataLoader<Id, CurrencyModel | null>;
  currencyByIso: DataLoader<string, CurrencyModel | null>;
  /** The caller's currency list (one key, `all`): read once per request, cached across requests for a TTL. */
  currencies: DataLoader<'all', CurrencyModel[]>;
  /** Events of a transaction or payout (`transaction.*` or `payout.*`), by object id. */
  transactionEvents: DataLoader<Id, EventModel[]>;
  payoutEvents: DataLoader<Id, EventModel[]>;
}

/** Events read per object for a status history: the upstream's largest page. */
export const OBJECT_EVENTS_PAGE = 100;

/**
 * The events of one kind of object, by id: one `GET /v1/events?filters[object_id]=`
 * per distinct id (the upstream filters by a single object id and has no
 * object-kind filter, so other kinds' events with the same id are dropped here).
 */
function eventsOf(api: PaymentsApi, kind: 'transaction' | 'payout'): DataLoader<Id, EventModel[]> {
  return new DataLoader<Id, EventModel[]>((ids) =>
    Promise.all(
      ids.map((id) =>
        api.events.list({ objectId: id, perPage: OBJECT_EVENTS_PAGE }).then(
          (page) => page.items.filter((e) => e.type.startsWith(`${kind}.`)),
          (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
        ),
      ),
    ),
  );
}

/** A batch of reads by id, one upstream call per distinct id; unknown ids are `null`. */
function byId<T>(retrieve: (id: Id) => Promise<T>): DataLoader<Id, T | null> {
  return new DataLoader<Id, T | null>((ids) =>
    Promise.all(
      ids.map((id) =>
        retrieve(id).catch((error: unknown) => {
          if (error instanceof UpstreamNotFoundError) return null;
          return error instanceof Error ? error : new Error(String(error));
        }),
      ),
    ),
  );
}

/** Like byId, with the entity cache consulted before the upstream. */
function cachedById<K extends Exclude<EntityKind, 'currencies'>>(
  cache: EntityCacheScope,
  kind: K,
  retrieve: (id: Id) => Promise<EntityModels[K]>,
): DataLoader<Id, EntityModels[K] | null> {
  const orNull = (id: Id) =>
    retrieve(id).catch((error: unknown) => {
      if (error instanceof UpstreamNotFoundError) return null;
      throw error;
    });
  return new DataLoader<Id, EntityModels[K] | null>((ids) => cache.load(kind, ids, (id) => orNull(id as Id)));
}

export function createLoaders(api: PaymentsApi, cache: EntityCacheScope): Loaders {
  const currencies = new DataLoader<'all', CurrencyModel[]>(async (keys) => {
    const [list] = await cache.load('currencies', ['all'], () => api.currencies.list());
    return keys.map(() => list ?? []);
  });
  const catalog = () => currencies.load('all');
  return {
    transaction: cachedById(cache, 'transaction', (id) => api.transactions.retrieve(id)),
    payout: cachedById(cache, 'payout', (id) => api.payouts.retrieve(id)),
    customer: cachedById(cache, 'customer', (id) => api.customers.retrieve(id)),
    webhook: byId((id) => api.webhooks.retrieve(id)),
    event: byId((id) => api.events.retrieve(id)),
    log: byId((id) => api.logs.retrieve(id)),
    currencyById: new DataLoader(async (ids) => {
      const list = await catalog();
      return ids.map((id) => list.find((c) => c.id === id) ?? null);
    }),
    currencyByIso: new DataLoader(async (isos) => {
      const list = await catalog();
      return isos.map((iso) => list.find((c) => c.iso.toUpperCase() === iso.toUpperCase()) ?? null);
    }),
    currencies,
    transactionEvents: eventsOf(api, 'transaction'),
    payoutEvents: eventsOf(api, 'payout'),
  };
}
