/**
 * Per-request DataLoaders over the upstream client, the entity cache under
 * them. The REST API has no batch read, so a batch is parallel reads of its
 * distinct ids: each id read at most once per request.
 */
import DataLoader from 'dataloader';
import type { Id, ListItem, PaymentsApi } from '../upstream/index.js';
import { UpstreamInvalidResponseError, UpstreamNotFoundError } from '../upstream/index.js';
import type {
  CurrencyModel,
  CustomerModel,
  EventModel,
  LogModel,
  PayoutModel,
  TransactionModel,
  WebhookModel,
} from '../upstream/index.js';
import { uncached, type EntityCacheScope, type EntityKind, type EntityModels } from '../cache/index.js';

export interface Loaders {
  transaction: DataLoader<Id, TransactionModel | null>;
  payout: DataLoader<Id, PayoutModel | null>;
  customer: DataLoader<Id, CustomerModel | null>;
  webhook: DataLoader<Id, WebhookModel | null>;
  event: DataLoader<Id, EventModel | null>;
  log: DataLoader<Id, LogModel | null>;
  currencyById: DataLoader<Id, CurrencyModel | null>;
  currencyByIso: DataLoader<string, CurrencyModel | null>;
  /** One key, `all`; a malformed item is its error, in its place. */
  currencies: DataLoader<'all', ListItem<CurrencyModel>[]>;
  transactionEvents: DataLoader<Id, EventModel[]>;
  payoutEvents: DataLoader<Id, EventModel[]>;
}

/** Metrics (batch sizes, cache hits) and traces (a span around each batch). */
export interface LoaderHooks {
  batch(loader: string, size: number): void;
  hit(loader: string): void;
  around?<T>(loader: string, size: number, run: () => Promise<T>): Promise<T>;
}

function watched<K, V>(name: string, stats: LoaderHooks | undefined, batch: DataLoader.BatchLoadFn<K, V>): [DataLoader.BatchLoadFn<K, V>, DataLoader.Options<K, V>] {
  if (!stats) return [batch, {}];
  const cache = new Map<K, Promise<V>>();
  const cacheMap: DataLoader.CacheMap<K, Promise<V>> = {
    get(key) {
      const found = cache.get(key);
      if (found !== undefined) stats.hit(name);
      return found;
    },
    set: (key, value) => cache.set(key, value),
    delete: (key) => cache.delete(key),
    clear: () => cache.clear(),
  };
  return [
    (keys) => {
      stats.batch(name, keys.length);
      return stats.around ? stats.around(name, keys.length, async () => batch(keys)) : batch(keys);
    },
    { cacheMap },
  ];
}

function loader<K, V>(name: keyof Loaders, stats: LoaderHooks | undefined, batch: DataLoader.BatchLoadFn<K, V>): DataLoader<K, V> {
  const [fn, options] = watched(name, stats, batch);
  return new DataLoader<K, V>(fn, options);
}

/** The upstream's largest page. */
export const OBJECT_EVENTS_PAGE = 100;

/** The upstream has no object-kind filter: other kinds' events with the same id are dropped here. */
function eventsOf(api: PaymentsApi, kind: 'transaction' | 'payout', stats: LoaderHooks | undefined): DataLoader<Id, EventModel[]> {
  return loader<Id, EventModel[]>(`${kind}Events`, stats, (ids) =>
    Promise.all(
      ids.map((id) =>
        api.events
          .list({ objectId: id, perPage: OBJECT_EVENTS_PAGE })
          .then((page) => objectEvents(page.items, kind, id))
          // Each id's failure is its own: the other histories of the batch stand.
          .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
      ),
    ),
  );
}

/**
 * The object id is checked on each event: an upstream may ignore the filter.
 * When it did filter, a malformed event is this object's and the history
 * fails rather than be told without it; otherwise it may be anyone's and is left out.
 */
function objectEvents(items: readonly ListItem<EventModel>[], kind: 'transaction' | 'payout', id: Id): EventModel[] {
  const malformed = items.find((item) => item instanceof UpstreamInvalidResponseError);
  const sound = items.filter((item): item is EventModel => !(item instanceof UpstreamInvalidResponseError));
  const ofObject = (e: EventModel) => (e.object_id ?? e.entity?.id) === id;
  if (malformed && sound.every(ofObject)) throw malformed;
  return sound.filter((e) => e.type.startsWith(`${kind}.`) && ofObject(e));
}

function byId<T>(name: keyof Loaders, stats: LoaderHooks | undefined, retrieve: (id: Id) => Promise<T>): DataLoader<Id, T | null> {
  return loader<Id, T | null>(name, stats, (ids) => Promise.all(ids.map((id) => retrieve(id).catch(notFoundOrError))));
}

function notFoundOrError(error: unknown): null | Error {
  if (error instanceof UpstreamNotFoundError) return null;
  return error instanceof Error ? error : new Error(String(error));
}

/** With no cache (`uncached`) the batch reads as byId does, with no cache frames in between. */
function cachedById<K extends Exclude<EntityKind, 'currencies'>>(
  cache: EntityCacheScope,
  kind: K,
  stats: LoaderHooks | undefined,
  retrieve: (id: Id) => Promise<EntityModels[K]>,
  name: keyof Loaders = kind as keyof Loaders,
): DataLoader<Id, EntityModels[K] | null> {
  if (cache === uncached) return byId(name, stats, retrieve);
  // Handed to the cache as it is (ids here are the loader's numbers).
  const orNull = (id: string | number) => retrieve(id as Id).catch(notFoundAsNull);
  return loader<Id, EntityModels[K] | null>(name, stats, (ids) => cache.load(kind, ids, orNull));
}

function notFoundAsNull(error: unknown): null {
  if (error instanceof UpstreamNotFoundError) return null;
  throw error;
}

const decoded = <T>(items: readonly ListItem<T>[]): T[] => items.filter((item): item is T => !(item instanceof UpstreamInvalidResponseError));

export function createLoaders(api: PaymentsApi, cache: EntityCacheScope, stats?: LoaderHooks): Loaders {
  return new OperationLoaders(api, cache, stats) as unknown as Loaders;
}

/** What a loader is made from: the operation's client, its cache scope, the hooks, and its other loaders. */
interface LoaderParts {
  readonly api: PaymentsApi;
  readonly cache: EntityCacheScope;
  readonly stats: LoaderHooks | undefined;
  readonly loaders: Loaders;
}

/** Every loader, by name, with the read it batches: a new one is one line here and one in `Loaders`. */
const LOADERS: { readonly [N in keyof Loaders]: (parts: LoaderParts) => Loaders[N] } = {
  transaction: ({ api, cache, stats }) => cachedById(cache, 'transaction', stats, (id) => api.transactions.retrieve(id)),
  payout: ({ api, cache, stats }) => cachedById(cache, 'payout', stats, (id) => api.payouts.retrieve(id)),
  customer: ({ api, cache, stats }) => cachedById(cache, 'customer', stats, (id) => api.customers.retrieve(id)),
  webhook: ({ api, stats }) => byId('webhook', stats, (id) => api.webhooks.retrieve(id)),
  event: ({ api, stats }) => byId('event', stats, (id) => api.events.retrieve(id)),
  log: ({ api, stats }) => byId('log', stats, (id) => api.logs.retrieve(id)),
  currencyById: ({ api, cache, stats }) => cachedById(cache, 'currency', stats, (id) => api.currencies.retrieve(id), 'currencyById'),
  // The spec reads currencies by id only: a lookup by ISO code needs the list.
  currencyByIso: ({ stats, loaders }) =>
    loader<string, CurrencyModel | null>('currencyByIso', stats, async (isos) => {
      const list = await loaders.currencies.load('all');
      const failed = list.find((c): c is UpstreamInvalidResponseError => c instanceof UpstreamInvalidResponseError);
      const byIso = new Map<string, CurrencyModel>();
      for (const c of decoded(list)) if (!byIso.has(c.iso.toUpperCase())) byIso.set(c.iso.toUpperCase(), c);
      return isos.map((iso) => {
        const found = byIso.get(iso.toUpperCase());
        // Not found among good items while one item is malformed: that one may be it, so "none" would be a guess.
        return found ?? failed ?? null;
      });
    }),
  currencies: ({ api, cache, stats, loaders }) =>
    loader<'all', ListItem<CurrencyModel>[]>('currencies', stats, async (keys) => {
      const [list] = await cache.load('currencies', ['all'], async () => {
        const items = await api.currencies.list();
        // Every good item is a read by id already made: kept for later operations too.
        await cache.put('currency', decoded(items).map((c) => ({ id: c.id, value: c })));
        return items;
      });
      if (Array.isArray(list)) for (const c of decoded(list)) loaders.currencyById.prime(c.id, c);
      return keys.map(() => list ?? []);
    }),
  transactionEvents: ({ api, stats }) => eventsOf(api, 'transaction', stats),
  payoutEvents: ({ api, stats }) => eventsOf(api, 'payout', stats),
};

/** Each made the first time it is read (a getter per entry of `LOADERS`): an operation uses a few of them. */
class OperationLoaders {
  readonly #made = new Map<string, unknown>();
  readonly #parts: LoaderParts;

  constructor(api: PaymentsApi, cache: EntityCacheScope, stats: LoaderHooks | undefined) {
    this.#parts = { api, cache, stats, loaders: this as unknown as Loaders };
  }

  static {
    for (const [name, make] of Object.entries(LOADERS) as [string, (parts: LoaderParts) => unknown][]) {
      Object.defineProperty(OperationLoaders.prototype, name, {
        get(this: OperationLoaders) {
          let made = this.#made.get(name);
          if (made === undefined) this.#made.set(name, (made = make(this.#parts)));
          return made;
        },
        enumerable: true,
      });
    }
  }
}
