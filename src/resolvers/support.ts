/** Small pieces every resolver file shares: id parsing, selection checks, relations, payload shaping. */
import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { selectedFieldNames } from '../graphql/selection.js';
import { badUserInput, toUserErrors, UserErrorCode, UserInputError, type UserError, type UserErrorShape } from '../errors.js';
import type { EntityCacheScope } from '../cache/index.js';
import type { Loaders } from '../loaders/index.js';
import type { CurrencyParent, CustomerParent } from './parents.js';
import type { Id, ListItem } from '../upstream/index.js';
import { UpstreamConflictError, UpstreamInvalidResponseError } from '../upstream/index.js';
import { snakeToCamel, type CamelCase } from '../naming.js';

/**
 * Each item primed, so later reads by id cost no call. A malformed item stays
 * its Error, reported at its path (docs/graphql-contract.md, Errors); the
 * type says `T | null` because the generated resolver types know no Error values.
 */
export function primedList<T extends { id: Id }>(items: readonly ListItem<T>[], loader: { prime(id: Id, value: NoInfer<T>): unknown }): (T | null)[] {
  for (const item of items) if (!(item instanceof UpstreamInvalidResponseError)) loader.prime(item.id, item);
  return items as (T | null)[];
}

/**
 * After a write. An id alone is read again if asked for: an answer that lacks
 * fields (a transaction update's `mode`) must not stand for the object.
 */
export async function forgetWritten(
  { loaders, entityCache }: { loaders: Loaders; entityCache: EntityCacheScope },
  kind: 'transaction' | 'payout',
  written: readonly (Id | { id: Id })[],
): Promise<void> {
  const loader = loaders[kind] as { clear(id: Id): { prime(id: Id, value: unknown): unknown } };
  for (const w of written) {
    if (typeof w === 'number') loader.clear(w);
    else loader.clear(w.id).prime(w.id, w);
  }
  await entityCache.evict(kind, written.map((w) => (typeof w === 'number' ? w : w.id)));
}

export function toUpstreamId(id: string | number, argument = 'id'): Id {
  const n = typeof id === 'number' ? id : /^\d{1,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw badUserInput(`\`${argument}\` must be a positive integer id of at most 15 digits.`, argument);
  return n;
}

export function toOptionalUpstreamId(id: string | number | null | undefined, argument: string): Id | undefined {
  return id === null || id === undefined ? undefined : toUpstreamId(id, argument);
}

/** Through fragments too; an id-only relation is then answered from the foreign key, with no call. */
export function selectsOnly(info: GraphQLResolveInfo, allowed: readonly string[]): boolean {
  return info.fieldNodes.every((node) =>
    selectedFieldNames(node.selectionSet, info.fragments, info.variableValues).every((name) => allowed.includes(name)),
  );
}

const ID_ONLY = ['id', '__typename'] as const;

/** Every item of a list shares its relation's field nodes, so the walk is done once per list. */
const idOnlyBySelection = new WeakMap<readonly FieldNode[], WeakMap<object, boolean>>();
function selectsIdOnly(info: GraphQLResolveInfo): boolean {
  let byVariables = idOnlyBySelection.get(info.fieldNodes);
  if (!byVariables) idOnlyBySelection.set(info.fieldNodes, (byVariables = new WeakMap()));
  let idOnly = byVariables.get(info.variableValues);
  if (idOnly === undefined) byVariables.set(info.variableValues, (idOnly = selectsOnly(info, ID_ONLY)));
  return idOnly;
}

/** Not `async`: a stub or a null goes back at once, saving two promises per item of a page. */
function relation<T>(
  foreignKey: number | null | undefined,
  info: GraphQLResolveInfo,
  load: (id: number) => Promise<T | null>,
  stub: (id: number) => T,
): T | null | Promise<T | null> {
  if (foreignKey === null || foreignKey === undefined) return null;
  if (selectsIdOnly(info)) return stub(foreignKey);
  return load(foreignKey);
}

export function customerRelation(customerId: number | null | undefined, info: GraphQLResolveInfo, loaders: Loaders) {
  return relation<CustomerParent>(customerId, info, (id) => loaders.customer.load(id), (id) => ({ id }));
}

export function currencyRelation(currencyId: number | null | undefined, info: GraphQLResolveInfo, loaders: Loaders) {
  return relation<CurrencyParent>(currencyId, info, (id) => loaders.currencyById.load(id), (id) => ({ id }));
}

/** Validation errors, unknown ids and refused changes become `userErrors` a form can show; the rest stays a GraphQL error. */
export async function withUserErrors<T, F>(
  shape: UserErrorShape,
  work: () => Promise<T>,
  failed: (userErrors: UserError[]) => F,
): Promise<T | F> {
  try {
    return await work();
  } catch (error) {
    const userErrors = toUserErrors(error, shape);
    if (!userErrors) throw error;
    if (error instanceof UpstreamConflictError && shape.object) return failed(await namingStatus(userErrors, shape.object));
    return failed(userErrors);
  }
}

/**
 * Names the status read after the refusal, no more: a 409 is most often that
 * status, but may be a concurrent change or a refused token.
 */
async function namingStatus(userErrors: UserError[], object: NonNullable<UserErrorShape['object']>): Promise<UserError[]> {
  const status = await object.read().then(
    (current) => current.status,
    () => null,
  );
  if (!status) return userErrors;
  const message = `The payments API refused this change; the ${object.kind} is now ${status.toLowerCase()}.`;
  return userErrors.map((e) => (e.code === UserErrorCode.InvalidState ? { ...e, message } : e));
}

export function payload<K extends string, T>(
  key: K,
  shape: UserErrorShape,
  work: () => Promise<T>,
): Promise<{ [P in K]: T | null } & { userErrors: UserError[] }> {
  type Payload = { [P in K]: T | null } & { userErrors: UserError[] };
  return withUserErrors(
    shape,
    async () => ({ [key]: await work(), userErrors: [] }) as Payload,
    (userErrors) => ({ [key]: null, userErrors }) as Payload,
  );
}

export type Check = [ok: boolean, field: string[], message: string];

/** Throws every refused check together, so a form shows every problem at once. */
export function checkInput(checks: Check[]): void {
  const failed = checks
    .filter(([ok]) => !ok)
    .map(([, field, message]): UserError => ({ field, message, code: UserErrorCode.Invalid }));
  if (failed.length > 0) throw new UserInputError(failed);
}

/** Like checkInput, over checks that throw a UserInputError; resolves to each check's value when all pass. */
export async function checkAll<T extends readonly unknown[]>(...checks: { [K in keyof T]: () => T[K] | Promise<T[K]> }): Promise<T> {
  const userErrors: UserError[] = [];
  const values: unknown[] = [];
  for (const check of checks) {
    try {
      values.push(await check());
    } catch (error) {
      if (!(error instanceof UserInputError)) throw error;
      userErrors.push(...error.userErrors);
    }
  }
  if (userErrors.length > 0) throw new UserInputError(userErrors);
  return values as unknown as T;
}

export function isoString(value: Date | string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}


/** camelCase fields of REST fields, the model key checked at compile time; absent reads as `null`. */
export function renamed<Model>() {
  return <K extends keyof Model & string>(...keys: K[]) =>
    Object.fromEntries(
      keys.map((key) => [snakeToCamel(key), (parent: Model) => parent[key] ?? null]),
    ) as { [P in K as CamelCase<P>]: (parent: Model) => NonNullable<Model[P]> | null };
}
