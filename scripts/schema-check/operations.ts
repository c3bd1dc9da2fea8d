/**
 * Step 3: every known document (documents.ts) validates against the working
 * tree's schema. A block that is SDL (a schema excerpt in the docs) is told
 * apart and not validated; a block of fragments alone is validated without
 * the rule that every fragment be used.
 */
import { GraphQLError, Kind, NoUnusedFragmentsRule, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { KnownDocument } from './documents.js';

export type DocumentKind = 'operations' | 'fragments' | 'sdl';

export interface OperationFinding {
  document: string;
  /** `invalid` against the working tree only; `invalid at release too` was already wrong before this change. */
  kind: 'invalid' | 'invalid at release too' | 'unparsable' | 'mixed' | 'not validated';
  message: string;
}

export interface OperationsResult {
  findings: OperationFinding[];
  validated: number;
  sdlBlocks: string[];
}

function kindOf(document: DocumentNode): DocumentKind | 'mixed' {
  const executable = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION);
  if (executable.length === 0) return 'sdl';
  if (executable.length < document.definitions.length) return 'mixed';
  return executable.some((d) => d.kind === Kind.OPERATION_DEFINITION) ? 'operations' : 'fragments';
}

const FRAGMENT_RULES = specifiedRules.filter((rule) => rule !== NoUnusedFragmentsRule);

function problems(schema: GraphQLSchema, document: DocumentNode, kind: DocumentKind, firstLine: number | undefined): string[] {
  return validate(schema, document, kind === 'fragments' ? FRAGMENT_RULES : specifiedRules).map((error) => {
    const at = error.locations?.[0];
    if (!at) return error.message;
    return firstLine === undefined ? `${error.message} (line ${at.line} of the document)` : `${error.message} (file line ${firstLine + at.line - 1})`;
  });
}

/** `tab 4` becomes `tab 4 (query Check)`: the operations (or, in a block of fragments, the fragments) a reader looks for. */
function withOperationNames(name: string, document: DocumentNode): string {
  const named = document.definitions.flatMap((d) => {
    if (d.kind === Kind.OPERATION_DEFINITION) return [`${d.operation} ${d.name?.value ?? '(anonymous)'}`];
    if (d.kind === Kind.FRAGMENT_DEFINITION) return [`fragment ${d.name.value}`];
    return [];
  });
  const operations = named.filter((n) => !n.startsWith('fragment '));
  return `${name} (${(operations.length > 0 ? operations : named).join(', ')})`;
}

export function checkOperations(documents: readonly KnownDocument[], current: GraphQLSchema, released: GraphQLSchema): OperationsResult {
  const findings: OperationFinding[] = [];
  const sdlBlocks: string[] = [];
  let validated = 0;
  for (const known of documents) {
    let document: DocumentNode;
    try {
      document = parse(known.source);
    } catch (error) {
      findings.push({ document: known.name, kind: 'unparsable', message: error instanceof GraphQLError ? error.message : String(error) });
      continue;
    }
    const kind = kindOf(document);
    if (kind === 'sdl') {
      sdlBlocks.push(known.name);
      continue;
    }
    if (kind === 'mixed') {
      findings.push({ document: known.name, kind: 'mixed', message: 'holds both SDL and operations: split it into two blocks' });
      continue;
    }
    validated++;
    const now = problems(current, document, kind, known.firstLine);
    if (now.length === 0) continue;
    const before = new Set(problems(released, document, kind, known.firstLine));
    const name = withOperationNames(known.name, document);
    for (const message of now) findings.push({ document: name, kind: before.has(message) ? 'invalid at release too' : 'invalid', message });
  }
  return { findings, validated, sdlBlocks };
}
