/**
 * The subgraph schema: the SDL files of schema/ (one per domain) with the
 * resolvers, built by @apollo/subgraph so `_service` and `_entities` exist.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse, type DocumentNode, type GraphQLSchema } from 'graphql';
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
  return buildSubgraphSchema({ typeDefs: loadTypeDefs(), resolvers: resolvers as never });
}
