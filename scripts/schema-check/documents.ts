/**
 * The operations the project ships, each named by where a reader finds it:
 * the explorer's tabs, the checkout example's `graphql(...)` documents, and
 * the ```graphql blocks of README.md and docs/*.md (some of which are SDL,
 * told apart in operations.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gqlPluckFromCodeStringSync } from '@graphql-tools/graphql-tag-pluck';
import { EXAMPLE_OPERATIONS } from '../../src/explorer/examples.js';

export interface KnownDocument {
  /** `docs/realtime.md, graphql block 2 (line 163)`, `src/explorer/examples.ts, tab 4`... */
  name: string;
  source: string;
  /** The line of its file the source starts on, when known: errors are reported at file lines. */
  firstLine?: number;
}

export const ROOT = new URL('../../', import.meta.url).pathname;

const CHECKOUT_SOURCES = 'examples/checkout/src';
const MARKDOWN = ['README.md', 'docs'];

function filesUnder(path: string, accept: (file: string) => boolean): string[] {
  const absolute = join(ROOT, path);
  if (!statSync(absolute).isDirectory()) return accept(path) ? [path] : [];
  return readdirSync(absolute)
    .sort()
    .flatMap((name) => filesUnder(join(path, name), accept));
}

export function explorerTabs(): KnownDocument[] {
  return EXAMPLE_OPERATIONS.map((tab, i) => ({ name: `src/explorer/examples.ts, tab ${i + 1}`, source: tab.query }));
}

export function checkoutDocuments(): KnownDocument[] {
  // The generated client (gql/) repeats the same documents.
  const files = filesUnder(CHECKOUT_SOURCES, (f) => /\.tsx?$/.test(f) && !f.includes('/gql/'));
  return files.flatMap((file) =>
    gqlPluckFromCodeStringSync(file, readFileSync(join(ROOT, file), 'utf8')).map((found) => ({
      name: `${file}, line ${found.locationOffset.line}`,
      source: found.body,
      firstLine: found.locationOffset.line,
    })),
  );
}

/** The ```graphql blocks of one Markdown text, numbered from 1 in the file. */
export function markdownBlocks(file: string, text: string): KnownDocument[] {
  const blocks: KnownDocument[] = [];
  for (const match of text.matchAll(/^```graphql[ \t]*\n([\s\S]*?)^```/gm)) {
    const line = text.slice(0, match.index).split('\n').length;
    blocks.push({ name: `${file}, graphql block ${blocks.length + 1} at line ${line}`, source: match[1]!, firstLine: line + 1 });
  }
  return blocks;
}

export function markdownDocuments(): KnownDocument[] {
  const files = MARKDOWN.flatMap((path) => filesUnder(path, (f) => f.endsWith('.md')));
  return files.flatMap((file) => markdownBlocks(file, readFileSync(join(ROOT, file), 'utf8')));
}

export function knownDocuments(): KnownDocument[] {
  return [...explorerTabs(), ...checkoutDocuments(), ...markdownDocuments()];
}
