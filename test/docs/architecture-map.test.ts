/**
 * docs/architecture.md's first screen is the map a newcomer enters by: every
 * folder of the gateway and every top-level product folder has its line there,
 * and the two places it says decisions live (a key's revocation, an upstream
 * call's retry) name files and functions that exist.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').split('\n');
const FIRST_SCREEN = 70;

/** The rows of the "Where things are" table, by the folders their first cell names. */
function mapRows(): { line: number; cell: string }[] {
  const start = page.findIndex((l) => l === '## Where things are');
  const rows: { line: number; cell: string }[] = [];
  for (let i = start + 1; i < page.length && !page[i]!.startsWith('## '); i++) {
    const cell = /^\| ([^|]+) \|/.exec(page[i]!)?.[1];
    if (cell && !cell.startsWith('---') && cell !== 'folder') rows.push({ line: i + 1, cell });
  }
  return rows;
}

const folders = (dir: string) => readdirSync(join(ROOT, dir)).filter((f) => statSync(join(ROOT, dir, f)).isDirectory());

it('opens with one line for each folder of src/ and each product folder, within the first screen', () => {
  const rows = mapRows();
  expect(rows.length).toBeGreaterThan(10);
  expect(Math.max(...rows.map((r) => r.line))).toBeLessThanOrEqual(FIRST_SCREEN);
  const named = rows.map((r) => r.cell).join(' ');
  const wanted = [
    ...folders('src')
      .filter((f) => f !== '__generated__')
      .map((f) => `\`src/${f}/\``),
    '`emulator/`',
    '`explorer/`',
    '`test/`',
    '`bench/`',
  ];
  expect(wanted.filter((folder) => !named.includes(folder))).toEqual([]);
});

it('says where a key is revoked and where an upstream call is retried, naming code that exists', () => {
  const screen = page.slice(0, FIRST_SCREEN).join('\n');
  const revocation = /\*\*A key's revocation\*\*: `(\w+)` in `(src\/[\w/.-]+)`/.exec(screen);
  const retry = /\*\*An upstream call's retry\*\*: `(src\/[\w/.-]+)`, its retry loop\s+\(`(\w+)`\)/.exec(screen);
  expect(revocation).not.toBeNull();
  expect(retry).not.toBeNull();
  const named: [string, string][] = [
    [revocation![1]!, revocation![2]!],
    [retry![2]!, retry![1]!],
  ];
  for (const [name, file] of named) {
    expect(existsSync(join(ROOT, file))).toBe(true);
    expect(readFileSync(join(ROOT, file), 'utf8')).toMatch(new RegExp(`(function|async|private|public)\\s+${name}\\b|\\b${name}\\s*\\(`));
  }
});
