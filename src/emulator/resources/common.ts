import { notFound } from '../errors.js';
import type { Row, Table } from '../store.js';
import { parseIdParam } from '../validate.js';

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
