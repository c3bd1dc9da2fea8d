import type { Engine, EventObject } from '../engine.js';
import { FieldErrors, notFound } from '../errors.js';
import { ok, type ApiRouter, type Handler, type RequestContext } from '../http/types.js';
import { paginate, readListQuery } from '../query.js';
import type { Kind } from '../render.js';
import type { Row, Table } from '../store.js';
import { isObject, parseIdParam } from '../validate.js';

/** The account's row with the id of the path, or a 404 (also for another account's id). */
export function findOr404<T extends Row>(table: Table<T>, accountId: number, idParam: string | undefined, what: string): T {
  const id = parseIdParam(idParam);
  const row = id === undefined ? undefined : table.find(accountId, id);
  if (!row) throw notFound(what, idParam ?? '');
  return row;
}

/** Like findOr404, but a soft-deleted row is gone for writes. */
export function findLiveOr404<T extends Row & { deleted_at: string | null }>(
  table: Table<T>,
  accountId: number,
  idParam: string | undefined,
  what: string,
): T {
  const row = findOr404(table, accountId, idParam, what);
  if (row.deleted_at !== null) throw notFound(what, idParam ?? '');
  return row;
}

type Tables = Pick<Engine, 'transactions' | 'payouts' | 'customers' | 'currencies' | 'webhooks' | 'events' | 'logs'>;
type RowOf<K extends keyof Tables> = Tables[K] extends Table<infer R> ? R : never;
export type ListQuery = ReturnType<typeof readListQuery>;

/**
 * A list or search route: reads paging and common filters, lets `keep` read
 * its own filters (adding to `q.errs`) and return the row predicate, refuses
 * bad parameters together, then renders one page of the account's rows. With
 * `listParams: 'strict'` only `page` and `per_page` are read: filters are
 * ignored, not refused, so the caller gets every row (options.ts).
 */
export function listRoute<K extends keyof Tables>(
  kind: Kind,
  table: K,
  keep: (q: ListQuery, ctx: RequestContext) => (row: RowOf<K>) => boolean = () => () => true,
  refusal = 'Invalid list parameters',
): Handler {
  return (full) => {
    const ctx = full.engine.options.listParams === 'strict' ? { ...full, query: documentedOnly(full.query) } : full;
    const q = readListQuery(ctx.query);
    const predicate = keep(q, ctx);
    q.errs.throwIfAny(refusal);
    const rows = (ctx.engine[table] as unknown as Table<RowOf<K>>).all(ctx.account.id);
    const { items, meta } = paginate(rows, predicate, q);
    return ok(ctx.engine.render.many(kind, items, meta));
  };
}

/** The list parameters the API family documents; a strict server ignores every other one. */
function documentedOnly(query: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const name of ['page', 'per_page']) if (query[name] !== undefined) kept[name] = query[name];
  return kept;
}

/** A read of one row by the path's id; `arrayOfOne` where the spec's table says the read returns an array. */
export function getRoute<K extends keyof Tables>(kind: Kind, table: K, what: string, shape: 'one' | 'arrayOfOne' = 'one'): Handler {
  return (ctx) => ok(ctx.engine.render[shape](kind, findOr404(ctx.engine[table] as unknown as Table<RowOf<K>>, ctx.account.id, ctx.params.id, what)));
}

/** The rows the API writes: they carry their write dates. */
type Writable = Row & { updated_at: string; deleted_at: string | null };
type WritableTable = 'transactions' | 'payouts' | 'customers';

/** Inserts a new row of the account and records `<kind>.created`, as every create does. */
export function insertCreated<K extends WritableTable>(engine: Engine, table: K, kind: EventObject, fields: RowOf<K>): RowOf<K> {
  const row = (engine[table] as unknown as Table<RowOf<K>>).insert(fields);
  engine.recordEvent(row.account_id, `${kind}.created`, kind, row);
  return row;
}

/**
 * Where an update of one object starts: the account's live row named by the
 * path (a 404 otherwise), the body as an object (any other body changes
 * nothing), and the list the reads of its fields add their errors to.
 */
export function updateTarget<K extends WritableTable>(ctx: RequestContext, table: K, what: string) {
  const row = findLiveOr404(ctx.engine[table] as unknown as Table<RowOf<K> & Writable>, ctx.account.id, ctx.params.id, what);
  return { row, body: isObject(ctx.body) ? ctx.body : {}, errs: new FieldErrors() };
}

/**
 * A soft delete of one of the account's live rows: `prepare` may refuse it
 * (by throwing) or stop what the row still has pending; then the row gets
 * `deleted_at`, `<kind>.deleted` is recorded, and the row is the answer.
 */
export function removeRoute<K extends WritableTable>(
  kind: EventObject,
  table: K,
  what: string,
  prepare: (row: RowOf<K>, engine: Engine) => void = () => {},
): Handler {
  return (ctx) => {
    const { engine, account } = ctx;
    const row = findLiveOr404(engine[table] as unknown as Table<RowOf<K> & Writable>, account.id, ctx.params.id, what);
    prepare(row, engine);
    row.deleted_at = row.updated_at = engine.now();
    engine.recordEvent(account.id, `${kind}.deleted`, kind, row);
    return ok(engine.render.one(kind, row));
  };
}

/** The routes of a writable resource: create, list, search (the same handler), read, update, delete. */
export function addCrudRoutes(
  router: ApiRouter,
  base: string,
  handlers: { create: Handler; list: Handler; read: Handler; update: Handler; remove: Handler },
): ApiRouter {
  return router
    .add('POST', base, handlers.create)
    .add('GET', base, handlers.list)
    .add('GET', `${base}/search`, handlers.list)
    .add('GET', `${base}/:id`, handlers.read)
    .add('PUT', `${base}/:id`, handlers.update)
    .add('DELETE', `${base}/:id`, handlers.remove);
}
