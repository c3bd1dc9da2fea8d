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
  return new OperationLoaders(api, cache, stats);
}

/** Each made the first time it is read: an operation uses a few of the eleven. */
class OperationLoaders implements Loaders {
  #transaction?: Loaders['transaction'];
  #payout?: Loaders['payout'];
  #customer?: Loaders['customer'];
  #webhook?: Loaders['webhook'];
  #event?: Loaders['event'];
  #log?: Loaders['log'];
  #currencyById?: Loaders['currencyById'];
  #currencyByIso?: Loaders['currencyByIso'];
  #currencies?: Loaders['currencies'];
  #transactionEvents?: Loaders['transactionEvents'];
  #payoutEvents?: Loaders['payoutEvents'];

  constructor(
    private readonly api: PaymentsApi,
    private readonly cache: EntityCacheScope,
    private readonly stats: LoaderHooks | undefined,
  ) {}

  get transaction(): Loaders['transaction'] {
    return (this.#transaction ??= cachedById(this.cache, 'transaction', this.stats, (id) => this.api.transactions.retrieve(id)));
  }

  get payout(): Loaders['payout'] {
    return (this.#payout ??= cachedById(this.cache, 'payout', this.stats, (id) => this.api.payouts.retrieve(id)));
  }

  get customer(): Loaders['customer'] {
    return (this.#customer ??= cachedById(this.cache, 'customer', this.stats, (id) => this.api.customers.retrieve(id)));
  }

  get webhook(): Loaders['webhook'] {
    return (this.#webhook ??= byId('webhook', this.stats, (id) => this.api.webhooks.retrieve(id)));
  }

  get event(): Loaders['event'] {
    return (this.#event ??= byId('event', this.stats, (id) => this.api.events.retrieve(id)));
  }

  get log(): Loaders['log'] {
    return (this.#log ??= byId('log', this.stats, (id) => this.api.logs.retrieve(id)));
  }

  get currencyById(): Loaders['currencyById'] {
    return (this.#currencyById ??= cachedById(this.cache, 'currency', this.stats, (id) => this.api.currencies.retrieve(id), 'currencyById'));
  }

  /** The spec reads currencies by id only: a lookup by ISO code needs the list. */
  get currencyByIso(): Loaders['currencyByIso'] {
    return (this.#currencyByIso ??= loader<string, CurrencyModel | null>('currencyByIso', this.stats, async (isos) => {
      const list = await this.currencies.load('all');
      const failed = list.find((c): c is UpstreamInvalidResponseError => c instanceof UpstreamInvalidResponseError);
      const byIso = new Map<string, CurrencyModel>();
      for (const c of decoded(list)) if (!byIso.has(c.iso.toUpperCase())) byIso.set(c.iso.toUpperCase(), c);
      return isos.map((iso) => {
        const found = byIso.get(iso.toUpperCase());
        // Not found among good items while one item is malformed: that one may be it, so "none" would be a guess.
        return found ?? failed ?? null;
      });
    }));
  }

  get currencies(): Loaders['currencies'] {
    return (this.#currencies ??= loader<'all', ListItem<CurrencyModel>[]>('currencies', this.stats, async (keys) => {
      const [list] = await this.cache.load('currencies', ['all'], async () => {
        const items = await this.api.currencies.list();
        // Every good item is a read by id already made: kept for later operations too.
        await this.cache.put('currency', decoded(items).map((c) => ({ id: c.id, value: c })));
        return items;
      });
      if (Array.isArray(list)) for (const c of decoded(list)) this.currencyById.prime(c.id, c);
      return keys.map(() => list ?? []);
    }));
  }

  get transactionEvents(): Loaders['transactionEvents'] {
    return (this.#transactionEvents ??= eventsOf(this.api, 'transaction', this.stats));
  }

  get payoutEvents(): Loaders['payoutEvents'] {
    return (this.#payoutEvents ??= eventsOf(this.api, 'payout', this.stats));
  }
}
