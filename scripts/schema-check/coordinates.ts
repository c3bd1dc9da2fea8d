/**
 * Schema coordinates, the names every finding of the check carries:
 * `Type`, `Type.field`, `Type.field(arg:)`, `Enum.VALUE`, `Input.field`,
 * `schema`, and for a directive on one of them `Type.field @cost(weight:)`.
 */
import {
  Kind,
  type ConstDirectiveNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  type TypeDefinitionNode,
  type TypeExtensionNode,
} from 'graphql';

/** One element of the SDL that directives can sit on, with the directives of all its definitions and extensions. */
export interface Element {
  coordinate: string;
  directives: ConstDirectiveNode[];
}

type TypeNode = TypeDefinitionNode | TypeExtensionNode;

/** Every element of an SDL document by coordinate; `extend type` blocks add to their type. */
export function elementsOf(document: DocumentNode): Map<string, Element> {
  const elements = new Map<string, Element>();
  const add = (coordinate: string, directives: readonly ConstDirectiveNode[] | undefined) => {
    const found = elements.get(coordinate);
    if (found) found.directives.push(...(directives ?? []));
    else elements.set(coordinate, { coordinate, directives: [...(directives ?? [])] });
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.SCHEMA_DEFINITION || definition.kind === Kind.SCHEMA_EXTENSION) {
      add('schema', definition.directives);
      continue;
    }
    if (!isTypeNode(definition)) continue;
    const type = definition.name.value;
    add(type, definition.directives);
    if ('fields' in definition) {
      for (const field of definition.fields ?? []) addField(add, type, field);
    }
    if ('values' in definition) {
      for (const value of definition.values ?? []) add(`${type}.${value.name.value}`, value.directives);
    }
  }
  return elements;
}

function addField(
  add: (coordinate: string, directives: readonly ConstDirectiveNode[] | undefined) => void,
  type: string,
  field: FieldDefinitionNode | InputValueDefinitionNode,
): void {
  const coordinate = `${type}.${field.name.value}`;
  add(coordinate, field.directives);
  if (field.kind === Kind.FIELD_DEFINITION) {
    for (const arg of field.arguments ?? []) add(`${coordinate}(${arg.name.value}:)`, arg.directives);
  }
}

function isTypeNode(node: DocumentNode['definitions'][number]): node is TypeNode {
  return (
    node.kind === Kind.OBJECT_TYPE_DEFINITION ||
    node.kind === Kind.OBJECT_TYPE_EXTENSION ||
    node.kind === Kind.INTERFACE_TYPE_DEFINITION ||
    node.kind === Kind.INTERFACE_TYPE_EXTENSION ||
    node.kind === Kind.UNION_TYPE_DEFINITION ||
    node.kind === Kind.UNION_TYPE_EXTENSION ||
    node.kind === Kind.ENUM_TYPE_DEFINITION ||
    node.kind === Kind.ENUM_TYPE_EXTENSION ||
    node.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION ||
    node.kind === Kind.INPUT_OBJECT_TYPE_EXTENSION ||
    node.kind === Kind.SCALAR_TYPE_DEFINITION ||
    node.kind === Kind.SCALAR_TYPE_EXTENSION
  );
}

/**
 * graphql-inspector's dotted path as a schema coordinate: a field argument
 * `Query.customers.first` becomes `Query.customers(first:)`, a directive's
 * argument `@listSize.assumedSize` becomes `@listSize(assumedSize:)`.
 */
export function coordinateOfInspectorPath(type: string, path: string | undefined): string {
  if (!path) return 'schema';
  const parts = path.split('.');
  if (type.startsWith('FIELD_ARGUMENT_') && parts.length === 3) return `${parts[0]}.${parts[1]}(${parts[2]}:)`;
  if (type.startsWith('DIRECTIVE_ARGUMENT_') && parts.length === 2) return `${parts[0]}(${parts[1]}:)`;
  return path;
}
