/** The subgraph schema: schema/*.graphql with the resolvers, built by @apollo/subgraph (`_service`, `_entities`). */
import { readdirSync, readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { GraphQLError, GraphQLUnionType, isObjectType, parse, type DocumentNode, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { ErrorCode } from './errors.js';
import { resolvers } from './resolvers/index.js';

const SCHEMA_DIR = new URL('../schema/', import.meta.url);

export function loadTypeDefs(): DocumentNode {
  const files = readdirSync(SCHEMA_DIR)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  const sdl = files.map((f) => readFileSync(new URL(f, SCHEMA_DIR), 'utf8')).join('\n');
  return parse(sdl);
}

export function buildSchema(): GraphQLSchema {
  // The generated resolver types are stricter than @apollo/subgraph's map type.
  const schema = buildSubgraphSchema({ typeDefs: loadTypeDefs(), resolvers: resolvers as never });
  checkRepresentations(schema);
  return schema;
}

/**
 * `_entities` is open to any keyed caller: a representation naming no entity or a key that is not a string or number
 * is BAD_USER_INPUT at its index, not a plain Error (@apollo/subgraph) or anything JSON (`_Any`).
 */
function checkRepresentations(schema: GraphQLSchema): void {
  const field = schema.getQueryType()?.getFields()._entities;
  const union = schema.getType('_Entity');
  if (!field || !(union instanceof GraphQLUnionType)) return;
  const entities = new Set(union.getTypes().filter(isObjectType).map((t) => t.name));
  const resolve = field.resolve as GraphQLFieldResolver<unknown, unknown, { representations: unknown[] }>;
  field.resolve = (source, args, context, info) => {
    args.representations.forEach((representation: unknown, index: number) => {
      const problem = representationProblem(representation, entities);
      if (problem) {
        throw new GraphQLError(`representations[${index}] ${problem}`, { extensions: { code: ErrorCode.BAD_USER_INPUT, argument: 'representations' } });
      }
    });
    return resolve(source, args, context, info);
  };
}

function representationProblem(value: unknown, entities: ReadonlySet<string>): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object with __typename and a key field.';
  const { __typename: typename, ...keys } = value as Record<string, unknown>;
  if (typeof typename !== 'string' || !entities.has(typename)) return `must name an entity of this subgraph in __typename (one of ${[...entities].sort().join(', ')}).`;
  for (const [name, key] of Object.entries(keys)) {
    if (typeof key !== 'string' && typeof key !== 'number') return `has a key field \`${name}\` that is not a string or a number.`;
  }
  return null;
}
