/**
 * The files a new REST endpoint with its query touches, counted over one that exists: the `logs` read and
 * the `log` query. Every hand-written gateway file (src/, schema/; not the generated types, the emulator or
 * the tests) that names the endpoint or the query is counted, and the count and the files must be those of
 * docs/architecture.md ("What a new endpoint with its query touches"): at most 8.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What names the `logs` endpoint or the `log` query: its model, its verbs, its loader, its resolvers, its type. */
const NAMES_IT = /\b(logModel|LogModel|logResolvers)\b|api\.logs\.|^ {2}logs: \{|type Log\b|loaders\.log\b|Gql\.Log\b/m;

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return path === 'src/__generated__' ? [] : files(path);
    return /\.(ts|graphql)$/.test(name) ? [path] : [];
  });
}

function documented(): string[] {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').split('\n');
  const start = page.indexOf('## What a new endpoint with its query touches');
  expect(start).toBeGreaterThan(0);
  const rows: string[] = [];
  for (let i = start + 1; i < page.length && !page[i]!.startsWith('## '); i++) {
    const cell = /^\| `([^`]+)` \|/.exec(page[i]!)?.[1];
    if (cell) rows.push(cell.replace('<domain>', 'log'));
  }
  return rows;
}

it('touches at most 8 hand-written files, the ones docs/architecture.md lists', () => {
  const touched = [...files('src'), ...files('schema')].filter((path) => NAMES_IT.test(readFileSync(join(ROOT, path), 'utf8'))).map((path) => relative('.', path));
  expect(touched.length).toBeLessThanOrEqual(8);
  expect(touched.sort()).toEqual(documented().sort());
});
