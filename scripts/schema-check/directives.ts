/**
 * The project's rule for the directives routers and other subgraphs act on:
 * graphql-inspector sees their arguments change only as an argument removed
 * (dangerous) and one added (safe), and has no idea that a new `@cost` weight
 * reprices operations or that a removed `@shareable` stops composition. Each
 * directive added, removed or with an argument changed on an element both
 * schemas have is one change, named `Type.field @directive(arg:)`.
 * Why each level: docs/federation.md, Schema changes.
 */
import { print, type ConstDirectiveNode, type DocumentNode, type GraphQLSchema } from 'graphql';
import { elementsOf } from './coordinates.js';
import type { Level, SchemaChange } from './changes.js';

interface DirectiveRule {
  added: Level;
  removed: Level;
  changed: Level;
  /** Who acts on it, said in every finding. */
  why: string;
  /** A repeatable directive's instances are told apart by this argument (`@key(fields:)`). */
  identity?: string;
}

const PLANNER = 'the query planner reads it';
const AUTH = 'a router authorizes by it';

const all = (level: Level, why: string, identity?: string): DirectiveRule => ({ added: level, removed: level, changed: level, why, identity });

export const DIRECTIVE_RULES: Readonly<Record<string, DirectiveRule>> = {
  key: { added: 'safe', removed: 'breaking', changed: 'breaking', why: 'other subgraphs reference the entity by its keys', identity: 'fields' },
  shareable: { added: 'safe', removed: 'breaking', changed: 'breaking', why: 'another subgraph that resolves the same fields no longer composes' },
  cost: all('breaking', "a router's demand control prices operations by it"),
  listSize: all('breaking', "a router's demand control prices lists by it"),
  cacheControl: all('breaking', "a router's response cache keeps answers by it"),
  external: all('breaking', PLANNER),
  requires: all('breaking', PLANNER),
  provides: all('breaking', PLANNER),
  override: all('breaking', PLANNER),
  extends: all('breaking', PLANNER),
  interfaceObject: all('breaking', PLANNER),
  context: all('breaking', PLANNER, 'name'),
  fromContext: all('breaking', PLANNER),
  composeDirective: all('breaking', 'the supergraph keeps the directive by it', 'name'),
  inaccessible: { added: 'breaking', removed: 'dangerous', changed: 'breaking', why: 'the supergraph API hides what it marks' },
  authenticated: { added: 'breaking', removed: 'dangerous', changed: 'breaking', why: AUTH },
  requiresScopes: { added: 'breaking', removed: 'dangerous', changed: 'breaking', why: AUTH },
  policy: { added: 'breaking', removed: 'dangerous', changed: 'breaking', why: AUTH },
  tag: all('dangerous', 'contracts select elements by their tags', 'name'),
  link: all('dangerous', 'it chooses the federation version and the directives composition knows', 'url'),
};

/** `@federation__requires` and `@requires` are one directive. */
export function ruleName(directive: string): string {
  return directive.replace(/^federation__/, '');
}

export function isWatchedDirective(directive: string): boolean {
  return ruleName(directive) in DIRECTIVE_RULES;
}

/** One use of a directive: its arguments printed, defaults filled in from its definition. */
interface Use {
  name: string;
  args: Map<string, string>;
  label: string;
}

function usesOf(directives: readonly ConstDirectiveNode[], schema: GraphQLSchema): Map<string, Use> {
  const uses = new Map<string, Use>();
  for (const node of directives) {
    const name = ruleName(node.name.value);
    const rule = DIRECTIVE_RULES[name];
    if (!rule) continue;
    const args = new Map<string, string>();
    const definition = schema.getDirective(node.name.value);
    for (const arg of definition?.args ?? []) {
      if (arg.astNode?.defaultValue) args.set(arg.name, print(arg.astNode.defaultValue));
    }
    for (const arg of node.arguments ?? []) args.set(arg.name.value, print(arg.value));
    const identity = rule.identity ? args.get(rule.identity) : undefined;
    const label = identity === undefined ? `@${name}` : `@${name}(${rule.identity}: ${identity})`;
    uses.set(label, { name, args, label });
  }
  return uses;
}

/** The directive changes on every element the two SDL documents both have. */
export function directiveChanges(
  before: { document: DocumentNode; schema: GraphQLSchema },
  after: { document: DocumentNode; schema: GraphQLSchema },
): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const next = elementsOf(after.document);
  for (const [coordinate, element] of elementsOf(before.document)) {
    const counterpart = next.get(coordinate);
    if (!counterpart) continue; // the element itself went: graphql-inspector names that
    const was = usesOf(element.directives, before.schema);
    const now = usesOf(counterpart.directives, after.schema);
    for (const [label, use] of was) {
      const rule = DIRECTIVE_RULES[use.name]!;
      const kept = now.get(label);
      if (!kept) {
        changes.push(finding(rule.removed, `${coordinate} ${label}`, `${label} removed from ${coordinate}: ${rule.why}`));
        continue;
      }
      for (const arg of new Set([...use.args.keys(), ...kept.args.keys()])) {
        const from = use.args.get(arg);
        const to = kept.args.get(arg);
        if (from === to) continue;
        // A repeatable directive's instance keeps its identity in the name: `Currency @key(fields: "iso", resolvable:)`.
        const identity = rule.identity && rule.identity !== arg ? use.args.get(rule.identity) : undefined;
        const coordinateOfArg = `${coordinate} @${use.name}(${identity === undefined ? '' : `${rule.identity}: ${identity}, `}${arg}:)`;
        changes.push(finding(rule.changed, coordinateOfArg, `${coordinateOfArg} changed from ${from ?? '(unset)'} to ${to ?? '(unset)'}: ${rule.why}`));
      }
    }
    for (const [label, use] of now) {
      if (was.has(label)) continue;
      const rule = DIRECTIVE_RULES[use.name]!;
      changes.push(finding(rule.added, `${coordinate} ${label}`, `${label} added to ${coordinate}: ${rule.why}`));
    }
  }
  return changes;
}

function finding(level: Level, coordinate: string, message: string): SchemaChange {
  return { level, coordinate, message, source: 'directive rule' };
}

