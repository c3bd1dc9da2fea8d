/**
 * The other subgraphs composition puts the payments subgraph beside: the
 * orders subgraph the federation tests run (it extends `Customer`), and
 * stand-ins written from the released SDL for what other subgraphs may rely
 * on: a reference to each entity by each of its keys, and every
 * `@shareable` field defined a second time. One stand-in per key position
 * (`references_1` holds each entity's first key, `references_2` the second),
 * so a key that goes cannot be covered by another one of the same subgraph.
 */
import { isEnumType, isObjectType, isScalarType, getNamedType, Kind, parse, type ConstDirectiveNode, type GraphQLObjectType } from 'graphql';
import { ORDERS_SDL } from '../../test/federation/orders-sdl.js';
import type { ParsedSdl } from './changes.js';
import { ruleName } from './directives.js';

export interface Subgraph {
  name: string;
  sdl: string;
}

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])';

function directivesOf(type: GraphQLObjectType): ConstDirectiveNode[] {
  return [type.astNode, ...type.extensionASTNodes].flatMap((node) => [...(node?.directives ?? [])]);
}

function stringArg(directive: ConstDirectiveNode, name: string): string | undefined {
  const arg = directive.arguments?.find((a) => a.name.value === name);
  if (arg?.value.kind === Kind.STRING) return arg.value.value;
  if (arg?.value.kind === Kind.BOOLEAN) return String(arg.value.value);
  return undefined;
}

/** The top-level field names of a key, or undefined for a nested key (`fields: "owner { id }"`), which the stand-ins do not model. */
function keyFieldNames(fields: string): string[] | undefined {
  const operation = parse(`{ ${fields} }`).definitions[0];
  if (operation?.kind !== Kind.OPERATION_DEFINITION) return undefined;
  const names: string[] = [];
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.selectionSet) return undefined;
    names.push(selection.name.value);
  }
  return names;
}

interface Reference {
  type: GraphQLObjectType;
  fields: string;
  names: string[];
}

/** Each entity's resolvable keys, in the order the SDL gives them. */
function references(released: ParsedSdl): Map<GraphQLObjectType, Reference[]> {
  const found = new Map<GraphQLObjectType, Reference[]>();
  for (const type of Object.values(released.schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('_')) continue;
    for (const directive of directivesOf(type)) {
      if (ruleName(directive.name.value) !== 'key' || stringArg(directive, 'resolvable') === 'false') continue;
      const fields = stringArg(directive, 'fields');
      const names = fields === undefined ? undefined : keyFieldNames(fields);
      if (!fields || !names) continue;
      found.set(type, [...(found.get(type) ?? []), { type, fields, names }]);
    }
  }
  return found;
}

/** Object types and the fields of them another subgraph may also resolve: `@shareable` on the type or the field, scalar-typed. */
function shareables(released: ParsedSdl): { type: GraphQLObjectType; fields: string[] }[] {
  const isShareable = (directives: readonly ConstDirectiveNode[]) => directives.some((d) => ruleName(d.name.value) === 'shareable');
  const found: { type: GraphQLObjectType; fields: string[] }[] = [];
  for (const type of Object.values(released.schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('_') || ['Query', 'Mutation', 'Subscription'].includes(type.name)) continue;
    const wholeType = isShareable(directivesOf(type));
    const fields = Object.values(type.getFields()).filter((field) => {
      const named = getNamedType(field.type);
      return isScalarType(named) && !isEnumType(named) && (wholeType || isShareable(field.astNode?.directives ?? []));
    });
    if (fields.length > 0) found.push({ type, fields: fields.map((f) => `${f.name}: ${String(f.type)}`) });
  }
  return found;
}

const BUILT_IN_SCALARS = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);

function scalarsUsed(lines: readonly string[]): string[] {
  const names = new Set(lines.flatMap((line) => [...line.matchAll(/:\s*\[?(\w+)/g)].map((m) => m[1]!)));
  return [...names].filter((name) => !BUILT_IN_SCALARS.has(name)).sort();
}

/** The stand-ins for a released SDL, the orders subgraph first. */
export function standIns(released: ParsedSdl): Subgraph[] {
  const byType = references(released);
  const positions = Math.max(1, ...[...byType.values()].map((keys) => keys.length));
  const subgraphs: Subgraph[] = [{ name: 'orders', sdl: ORDERS_SDL }];
  for (let position = 1; position <= positions; position++) {
    const query: string[] = [];
    const types: string[] = [];
    const fieldLines: string[] = [];
    for (const [type, keys] of byType) {
      const key = keys[position - 1];
      if (!key) continue;
      const fields = key.names.map((name) => `${name}: ${String(type.getFields()[name]?.type ?? 'ID')}`);
      fieldLines.push(...fields);
      query.push(`  ref${position}${type.name}: ${type.name}`);
      types.push(`type ${type.name} @key(fields: ${JSON.stringify(key.fields)}, resolvable: false) {\n  ${fields.join('\n  ')}\n}`);
    }
    if (position === 1) {
      for (const { type, fields } of shareables(released)) {
        if (byType.has(type)) continue; // an entity's own fields are not shared values
        fieldLines.push(...fields);
        query.push(`  ref1${type.name}: ${type.name}`);
        types.push(`type ${type.name} @shareable {\n  ${fields.join('\n  ')}\n}`);
      }
    }
    if (query.length === 0) continue;
    const scalars = scalarsUsed(fieldLines).map((name) => `scalar ${name}`);
    const sdl = [LINK, `type Query {\n${query.join('\n')}\n}`, ...types, ...scalars].join('\n\n');
    subgraphs.push({ name: `references_${position}`, sdl: `${sdl}\n` });
  }
  return subgraphs;
}
