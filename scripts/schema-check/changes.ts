/**
 * Step 1: every change from the released SDL to the working tree's, each
 * breaking, dangerous or safe, named by its coordinate. graphql-inspector
 * classifies types, fields, arguments, enum values and descriptions; the
 * directives routers act on follow the project's rule (directives.ts), so
 * graphql-inspector's own findings on those are dropped, not doubled.
 */
import { diff, type Change } from '@graphql-inspector/core';
import { buildASTSchema, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { coordinateOfInspectorPath } from './coordinates.js';
import { directiveChanges, isWatchedDirective } from './directives.js';

export type Level = 'breaking' | 'dangerous' | 'safe';

export interface SchemaChange {
  level: Level;
  /** `Type.field(arg:)`, `Enum.VALUE`, `Type.field @cost(weight:)`... */
  coordinate: string;
  message: string;
  /** graphql-inspector's change type, or `directive rule`. */
  source: string;
}

export interface ParsedSdl {
  sdl: string;
  document: DocumentNode;
  schema: GraphQLSchema;
}

/** An SDL as the check reads it: the subgraph SDL builds as a plain schema (the federation directives are defined in it). */
export function parseSdl(sdl: string): ParsedSdl {
  const document = parse(sdl);
  return { sdl, document, schema: buildASTSchema(document) };
}

const LEVELS: Record<string, Level> = { BREAKING: 'breaking', DANGEROUS: 'dangerous', NON_BREAKING: 'safe' };

function directiveOfUsage(change: Change): string | undefined {
  if (!String(change.type).startsWith('DIRECTIVE_USAGE_')) return undefined;
  const meta = change.meta as { directiveName?: unknown; addedDirectiveName?: unknown; removedDirectiveName?: unknown };
  const name = meta.directiveName ?? meta.addedDirectiveName ?? meta.removedDirectiveName;
  return typeof name === 'string' ? name : undefined;
}

export async function schemaChanges(before: ParsedSdl, after: ParsedSdl): Promise<SchemaChange[]> {
  const inspected = (await diff(before.schema, after.schema))
    .filter((change) => {
      const directive = directiveOfUsage(change);
      return directive === undefined || !isWatchedDirective(directive);
    })
    .map(
      (change): SchemaChange => ({
        level: LEVELS[change.criticality.level] ?? 'dangerous',
        coordinate: coordinateOfInspectorPath(String(change.type), change.path),
        message: change.message,
        source: String(change.type),
      }),
    );
  return [...inspected, ...directiveChanges(before, after)];
}
