/**
 * An answer's `Cache-Control`, decided once per parsed document with no per-field hook (docs/performance.md, Cache
 * hints for routers); types cacheable only when final are checked on the answer (`finalAnswer`).
 */
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';

export interface CacheHintRules {
  /** A type not named here keeps nothing (unless it is of weight 0, part of its parent). */
  maxAge: Readonly<Record<string, number>>;
  finalWhen: Readonly<Record<string, (status: string) => boolean>>;
}

export interface DocumentCacheHint {
  maxAge: number;
  statusChecks: ReadonlyMap<string, (status: string) => boolean>;
  /** A null under these keys (not found yet) is not final either. */
  holders: ReadonlySet<string>;
  /** The root fields' response keys (`_entities` among them): a null there is an object not found, of any type. */
  roots: ReadonlySet<string>;
}

const NO_STORE: DocumentCacheHint = { maxAge: 0, statusChecks: new Map(), holders: new Set(), roots: new Set() };

function weighsNothing(type: GraphQLNamedType): boolean {
  const cost = type.astNode?.directives?.find((d) => d.name.value === 'cost');
  const weight = cost?.arguments?.find((a) => a.name.value === 'weight')?.value;
  return weight?.kind === Kind.INT && Number(weight.value) === 0;
}

export function createCacheHints(schema: GraphQLSchema, rules: CacheHintRules): (document: DocumentNode, operationName: string | undefined) => DocumentCacheHint {
  const remembered = new WeakMap<DocumentNode, Map<string, DocumentCacheHint>>();
  return (document, operationName) => {
    let byName = remembered.get(document);
    if (!byName) remembered.set(document, (byName = new Map()));
    const key = operationName ?? '';
    let hint = byName.get(key);
    if (!hint) byName.set(key, (hint = hintOf(schema, rules, document, operationName)));
    return hint;
  };
}

function hintOf(schema: GraphQLSchema, rules: CacheHintRules, document: DocumentNode, operationName: string | undefined): DocumentCacheHint {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName === undefined ? (operations.length === 1 ? operations[0] : undefined) : operations.find((o) => o.name?.value === operationName);
  if (!operation || operation.operation !== 'query') return NO_STORE;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const query = schema.getQueryType();
  if (!query) return NO_STORE;

  let maxAge = Number.POSITIVE_INFINITY;
  const statusChecks = new Map<string, (status: string) => boolean>();
  const holders = new Set<string>();
  const roots = new Set<string>();
  let refused = false;

  const visit = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType, holder?: string): void => {
    for (const selection of selectionSet.selections) {
      if (refused) return;
      if (selection.kind === Kind.FRAGMENT_SPREAD || selection.kind === Kind.INLINE_FRAGMENT) {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
        const condition = fragment?.typeCondition?.name.value;
        const on = condition ? schema.getType(condition) : parent;
        if (!fragment || !on || !isCompositeType(on)) continue;
        // Under a union or interface (`_entities`), the fragment's type is the one read.
        if (isAbstractType(parent) && !isAbstractType(on)) enter(on, fragment.selectionSet, holder);
        else visit(fragment.selectionSet, on, holder);
        continue;
      }
      const name = selection.name.value;
      if (name === '__typename') continue;
      const field = isAbstractType(parent) ? undefined : parent.getFields()[name];
      if (!field || name.startsWith('__')) {
        refused = true;
        return;
      }
      const type = getNamedType(field.type);
      if (!isCompositeType(type) || !selection.selectionSet) continue;
      const key = selection.alias?.value ?? name;
      if (parent === query) roots.add(key);
      if (isObjectType(type)) enter(type, selection.selectionSet, key);
      else visit(selection.selectionSet, type, key);
    }
  };

  const enter = (type: GraphQLCompositeType, selectionSet: SelectionSetNode, holder: string | undefined): void => {
    if (isObjectType(type) && !weighsNothing(type)) {
      const age = rules.maxAge[type.name];
      const isFinal = rules.finalWhen[type.name];
      if (!age || age <= 0 || (isFinal && !checkStatus(selectionSet, isFinal))) {
        refused = true;
        return;
      }
      if (isFinal && holder !== undefined) holders.add(holder);
      maxAge = Math.min(maxAge, age);
    }
    visit(selectionSet, type);
  };

  const checkStatus = (selectionSet: SelectionSetNode, isFinal: (status: string) => boolean): boolean => {
    const status = selectionSet.selections.find((s) => s.kind === Kind.FIELD && s.name.value === 'status' && !s.directives?.length);
    if (!status || status.kind !== Kind.FIELD) return false;
    const responseKey = status.alias?.value ?? 'status';
    const other = statusChecks.get(responseKey);
    // The same key on two types: a status is final only if both say so.
    statusChecks.set(responseKey, other && other !== isFinal ? (s) => other(s) && isFinal(s) : isFinal);
    return true;
  };

  visit(operation.selectionSet, query);
  if (refused || !Number.isFinite(maxAge)) return NO_STORE;
  return { maxAge, statusChecks, holders, roots };
}

/**
 * Whether an answer may be kept: no root object missing (it may exist a moment later), then a walk of the
 * answer, once, only for documents that select a type kept only when final.
 */
export function finalAnswer(
  data: unknown,
  statusChecks: ReadonlyMap<string, (status: string) => boolean>,
  holders: ReadonlySet<string> = new Set(),
  roots: ReadonlySet<string> = new Set(),
): boolean {
  if (roots.size > 0 && (typeof data !== 'object' || data === null || [...roots].some((key) => isMissing((data as Record<string, unknown>)[key])))) return false;
  if (statusChecks.size === 0) return true;
  if (typeof data !== 'object' || data === null) return false;
  const pending: unknown[] = [data];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        const isFinal = statusChecks.get(key);
        // A status missing or not a string (null after an error) is not known to be final.
        if (isFinal && (typeof child !== 'string' || !isFinal(child))) return false;
        if (holders.has(key) && isMissing(child)) return false;
        if (typeof child === 'object') pending.push(child);
      }
    }
  }
  return true;
}

const isMissing = (value: unknown): boolean => value === null || (Array.isArray(value) && value.includes(null));
