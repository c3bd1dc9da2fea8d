/**
 * The one walker over a selection set (fragments, `@skip`, `@include`), so the auth gate, the id-only shortcut and
 * the idempotency guard agree with what graphql-js will execute.
 */
import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type InlineFragmentNode,
  type SelectionSetNode,
} from 'graphql';

export type Fragments = Readonly<Record<string, FragmentDefinitionNode>>;
export type Variables = Readonly<Record<string, unknown>>;

export function isIncluded(node: FieldNode | FragmentSpreadNode | InlineFragmentNode, variables: Variables): boolean {
  const skip = getDirectiveValues(GraphQLSkipDirective, node, variables as Record<string, unknown>);
  if (skip?.if === true) return false;
  const include = getDirectiveValues(GraphQLIncludeDirective, node, variables as Record<string, unknown>);
  return include?.if !== false;
}

export function selectedFieldNames(set: SelectionSetNode | undefined, fragments: Fragments, variables: Variables = {}): string[] {
  const names: string[] = [];
  const visit = (current: SelectionSetNode) => {
    for (const sel of current.selections) {
      if (!isIncluded(sel, variables)) continue;
      if (sel.kind === Kind.FIELD) names.push(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) visit(sel.selectionSet);
      else {
        const fragment = fragments[sel.name.value];
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  if (set) visit(set);
  return names;
}

export function fragmentsOf(definitions: readonly { kind: Kind }[]): Fragments {
  // No prototype: a fragment named `__proto__` or `constructor` is a key like any other.
  const fragments = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const def of definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) {
      const fragment = def as FragmentDefinitionNode;
      fragments[fragment.name.value] = fragment;
    }
  }
  return fragments;
}
