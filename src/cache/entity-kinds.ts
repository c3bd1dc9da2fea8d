/**
 * Each kind of object the gateway keeps, declared once: its model, the GraphQL type it answers as, which setting
 * bounds how long it is kept, whether a webhook or a mutation evicts it, whether a router may hold it
 * under a tag, and the root field that reads one by id. The entity cache, router invalidation, the
 * cache hints (server/apollo.ts) and the HTTP cache tags (http/cache-headers.ts) read it.
 */
import type { CurrencyModel, CustomerModel, ListItem, PayoutModel, TransactionModel } from '../upstream/index.js';

/** A kind's model, as a type only: the value is never read. */
const model = <T>(): T => undefined as T;

export interface EntityKindDeclaration {
  /** What the cache holds under one id (`model<T>()`). */
  readonly model: unknown;
  /** The GraphQL type its objects answer as; null for a list kept whole. */
  readonly typename: string | null;
  /** What bounds its TTL: the final TTL (kept once final, or while pending under webhooks), or a fixed one; a list with a malformed item is not kept. */
  readonly ttl: 'final' | 'customer' | 'currency';
  /** Evicted for every caller when a verified webhook or a mutation names it; otherwise it only expires. */
  readonly evictable: boolean;
  /** A router may keep answers holding it, tagged `<kind>-<id>` and invalidated by that tag. */
  readonly routerTag: boolean;
  /** The root field reading one by `id`, whose answer carries its tag. */
  readonly rootField: string | null;
}

export const ENTITY_KINDS = {
  transaction: { model: model<TransactionModel>(), typename: 'Transaction', ttl: 'final', evictable: true, routerTag: true, rootField: 'transaction' },
  payout: { model: model<PayoutModel>(), typename: 'Payout', ttl: 'final', evictable: true, routerTag: true, rootField: 'payout' },
  customer: { model: model<CustomerModel>(), typename: 'Customer', ttl: 'customer', evictable: true, routerTag: true, rootField: 'customer' },
  currency: { model: model<CurrencyModel>(), typename: 'Currency', ttl: 'currency', evictable: false, routerTag: false, rootField: null },
  // A caller's whole currency list, under the id `all`.
  currencies: { model: model<ListItem<CurrencyModel>[]>(), typename: null, ttl: 'currency', evictable: false, routerTag: false, rootField: null },
} as const satisfies Record<string, EntityKindDeclaration>;

export type DeclaredKind = keyof typeof ENTITY_KINDS;
/** What the cache holds under one id of each kind. */
export type DeclaredModels = { [K in DeclaredKind]: (typeof ENTITY_KINDS)[K]['model'] };

const DECLARATIONS = Object.entries(ENTITY_KINDS) as [DeclaredKind, EntityKindDeclaration][];

/** The kinds whose declaration says `test`. */
export function kindsWhere(test: (declaration: EntityKindDeclaration) => boolean): ReadonlySet<string> {
  return new Set(DECLARATIONS.filter(([, d]) => test(d)).map(([kind]) => kind));
}

/** Root field -> the kind it reads by id, for the kinds a router may tag. */
export const TAGGED_ROOT_FIELDS: Readonly<Record<string, DeclaredKind | undefined>> = Object.freeze(
  // No prototype: a field named like one of Object's members is no kind.
  Object.assign(Object.create(null) as Record<string, DeclaredKind>, Object.fromEntries(DECLARATIONS.filter(([, d]) => d.routerTag && d.rootField !== null).map(([kind, d]) => [d.rootField!, kind]))),
);

/** GraphQL type -> the setting bounding how long an answer holding it may be kept. */
export function typeTtls(): readonly (readonly [typename: string, ttl: EntityKindDeclaration['ttl'], kind: DeclaredKind])[] {
  return DECLARATIONS.filter(([, d]) => d.typename !== null).map(([kind, d]) => [d.typename!, d.ttl, kind] as const);
}
