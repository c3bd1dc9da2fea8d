/**
 * How long an answer may be kept, decided from the document alone, once per
 * parsed document (no per-field hook while it runs): each selected type may
 * be kept for its TTL, a type with none (a list whose members change, a
 * mutable object) keeps nothing, and the answer gets the smallest. Types of
 * weight 0 (`@cost(weight: 0)`: money, phone numbers, edges, history entries)
 * and scalars are part of their parent and inherit its hint.
 * Some types are cacheable only in a final state, which only the answer tells:
 * the document must select their `status` (else nothing is kept), and
 * `finalAnswer` checks the statuses the answer carries.
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
  /** Seconds each type may be kept; a type not named here keeps nothing (unless it is of weight 0). */
  maxAge: Readonly<Record<string, number>>;
  /** Types kept only in a final state: whether a `status` value is final. */
  finalWhen: Readonly<Record<string, (status: string) => boolean>>;
}

/** The static part of an answer's hint: seconds (0: keep nothing), and the status keys to check in the answer. */
export interface DocumentCacheHint {
  maxAge: number;
  /** Response keys of `status` on a type kept only when final, with the test of each. */
  statusChecks: ReadonlyMap<string, (status: string) => boolean>;
  /** Response keys of fields holding such a type: a null there (not found) is not final either. */
  holders: ReadonlySet<string>;
}

const NO_STORE: DocumentCacheHint = { maxAge: 0, statusChecks: new Map(), holders: new Set() };

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
  let refused = false;

  /** `holder`: the response key of the field whose value this selection reads. */
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
      if (isObjectType(type)) enter(type, selection.selectionSet, key);
      else visit(selection.selectionSet, type, key);
    }
  };

  /** An object type read: its TTL bounds the answer's, and its status is checked if it must be final. */
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

  /** The response key of `status` in this selection, registered; false when it is not selected unconditionally. */
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
  return { maxAge, statusChecks, holders };
}

/**
 * Whether every status the answer carries under a checked key is final, and no
 * field that holds such an object is null (not found yet is not final): a walk
 * of the answer's objects, once, only for documents that select such a type.
 */
export function finalAnswer(
  data: unknown,
  statusChecks: ReadonlyMap<string, (status: string) => boolean>,
  holders: ReadonlySet<string> = new Set(),
): boolean {
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
        if (holders.has(key) && (child === null || (Array.isArray(child) && child.includes(null)))) return false;
        if (typeof child === 'object') pending.push(child);
      }
    }
  }
  return true;
}
