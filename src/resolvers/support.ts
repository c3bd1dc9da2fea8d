/**
 * Small pieces every resolver file shares: id parsing, selection checks,
 * status enums, payload shaping. Business rules do not live here.
 */
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { badUserInput } from '../errors.js';
import type { Loaders } from '../loaders/index.js';
import type { Logger } from '../logger.js';
import type { CurrencyModel, CustomerModel } from '../upstream/models.js';
import type { Id } from '../upstream/api.js';
import { UpstreamConflictError, UpstreamNotFoundError, UpstreamValidationError } from '../upstream/errors.js';

/** GraphQL `ID` -> upstream integer id; anything else is a caller's mistake. */
export function toUpstreamId(id: string | number, argument = 'id'): Id {
  const n = typeof id === 'number' ? id : /^\d{1,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw badUserInput(`\`${argument}\` must be a positive integer id.`, argument);
  return n;
}

/** Optional id argument (filters). */
export function toOptionalUpstreamId(id: string | number | null | undefined, argument: string): Id | undefined {
  return id === null || id === undefined ? undefined : toUpstreamId(id, argument);
}

/**
 * Whether the selection on this field asks for nothing but the given fields
 * (through fragments too). A relation of which only `id` is selected is then
 * answered from the parent's foreign key, without an upstream call.
 */
export function selectsOnly(info: GraphQLResolveInfo, allowed: readonly string[]): boolean {
  const ok = (set: SelectionSetNode | undefined): boolean =>
    !set ||
    set.selections.every((sel) => {
      if (sel.kind === Kind.FIELD) return allowed.includes(sel.name.value);
      if (sel.kind === Kind.INLINE_FRAGMENT) return ok(sel.selectionSet);
      const fragment = info.fragments[sel.name.value];
      return fragment ? ok(fragment.selectionSet) : false;
    });
  return info.fieldNodes.every((node) => ok(node.selectionSet));
}

const ID_ONLY = ['id', '__typename'] as const;

/**
 * Resolves a to-one relation through a loader, or from the foreign key alone
 * when only `id` is selected.
 */
async function relation<T>(
  foreignKey: number | null | undefined,
  info: GraphQLResolveInfo,
  load: (id: number) => Promise<T | null>,
  stub: (id: number) => T,
): Promise<T | null> {
  if (foreignKey === null || foreignKey === undefined) return null;
  if (selectsOnly(info, ID_ONLY)) return stub(foreignKey);
  return load(foreignKey);
}

/** `customer` of a transaction or payout: a loader read, or just the id. */
export function customerRelation(customerId: number | null | undefined, info: GraphQLResolveInfo, loaders: Loaders) {
  return relation<CustomerModel>(customerId, info, (id) => loaders.customer.load(id), (id) => ({ id }));
}

/** `currency` of a transaction, payout or payment intent: from the cached list, or just the id. */
export function currencyRelation(currencyId: number | null | undefined, info: GraphQLResolveInfo, loaders: Loaders) {
  // `iso` is required by the model but not selected when the stub is returned.
  return relation<CurrencyModel>(currencyId, info, (id) => loaders.currencyById.load(id), (id) => ({ id, iso: '' }));
}

/**
 * Upstream status string -> GraphQL enum value. A value we do not know yet is
 * `UNKNOWN` and logged, never a crash (api.md, Conventions).
 */
export function statusEnum<T extends string>(
  value: string | null | undefined,
  known: readonly T[],
  logger: Logger,
  what: string,
): T | 'UNKNOWN' {
  const upper = (value ?? '').toUpperCase() as T;
  if (known.includes(upper)) return upper;
  logger.warn({ what, value }, 'unknown upstream status mapped to UNKNOWN');
  return 'UNKNOWN';
}

export type UserErrorCode = 'INVALID' | 'REQUIRED' | 'NOT_FOUND' | 'INVALID_STATE' | 'UNKNOWN';

export interface UserError {
  field: string[] | null;
  message: string;
  code: UserErrorCode;
}

const snakeToCamel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** `currency.iso` / `currency[iso]` / `payouts.0.id` -> ['input', 'currency', 'iso']. */
export function fieldPath(upstreamField: string, root: string | null): string[] {
  const parts = upstreamField.split(/[.[\]]+/).filter(Boolean).map(snakeToCamel);
  return root ? [root, ...parts] : parts;
}

/**
 * Runs a mutation's upstream work: upstream validation errors, unknown ids
 * and refused state changes become the payload `failed` builds from the
 * `userErrors` (a form can show them); every other failure stays a GraphQL error.
 */
export async function withUserErrors<T, F>(
  root: string | null,
  work: () => Promise<T>,
  failed: (userErrors: UserError[]) => F,
): Promise<T | F> {
  try {
    return await work();
  } catch (error) {
    const userErrors = toUserErrors(error, root);
    if (!userErrors) throw error;
    return failed(userErrors);
  }
}

/** The common payload shape `{ <key>: object | null, userErrors }`. */
export function payload<K extends string, T>(
  key: K,
  root: string | null,
  work: () => Promise<T>,
): Promise<{ [P in K]: T | null } & { userErrors: UserError[] }> {
  type Payload = { [P in K]: T | null } & { userErrors: UserError[] };
  return withUserErrors(
    root,
    async () => ({ [key]: await work(), userErrors: [] }) as Payload,
    (userErrors) => ({ [key]: null, userErrors }) as Payload,
  );
}

export function toUserErrors(error: unknown, root: string | null): UserError[] | null {
  if (error instanceof UserInputError) return error.userErrors;
  if (error instanceof UpstreamValidationError) {
    const entries = Object.entries(error.fieldErrors);
    if (entries.length === 0) return [{ field: null, message: error.message, code: 'INVALID' }];
    return entries.flatMap(([field, messages]) =>
      messages.map((message) => ({
        field: fieldPath(field, root),
        message,
        code: /required|missing|blank/i.test(message) ? ('REQUIRED' as const) : ('INVALID' as const),
      })),
    );
  }
  if (error instanceof UpstreamNotFoundError) {
    return [{ field: ['id'], message: 'No such object in this account.', code: 'NOT_FOUND' }];
  }
  if (error instanceof UpstreamConflictError) {
    return [{ field: null, message: error.message, code: 'INVALID_STATE' }];
  }
  return null;
}

/** Input the gateway itself refuses before calling upstream, as user errors. */
export class UserInputError extends Error {
  constructor(readonly userErrors: UserError[]) {
    super(userErrors.map((e) => e.message).join('; '));
    this.name = 'UserInputError';
  }
}

/** Collects checks on an input and throws them together, so a form shows every problem at once. */
export function checkInput(checks: [boolean, string[], string][]): void {
  const failed = checks
    .filter(([ok]) => !ok)
    .map(([, field, message]) => ({ field, message, code: 'INVALID' as const }));
  if (failed.length > 0) throw new UserInputError(failed);
}

/** DateTime scalar input (a Date from graphql-scalars) -> ISO string for the wire. */
export function isoString(value: Date | string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/**
 * Resolvers for fields that are the camelCase of a REST field
 * (`amount_transferred` -> `amountTransferred`): the model key is checked at
 * compile time, and an absent value reads as `null`.
 */
export function renamed<Model>() {
  return <K extends keyof Model & string>(...keys: K[]) =>
    Object.fromEntries(
      keys.map((key) => [key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), (parent: Model) => parent[key] ?? null]),
    ) as { [P in K as CamelCase<P>]: (parent: Model) => NonNullable<Model[P]> | null };
}
