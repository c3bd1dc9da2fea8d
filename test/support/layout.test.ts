/**
 * The suite's layout, kept: the test of `src/x/y.ts` is `test/unit/x/y.test.ts`
 * (of `emulator/x/y.ts`, `test/unit/emulator/x/y.test.ts`)
 * (or `y.<aspect>.test.ts`, and `y.redis.test.ts` for the part over a real
 * redis-server), and no two test files share a name except unit tests of
 * modules whose own names repeat in `src/` (two `index.ts`, two `store.ts`).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

const all = testFiles(join(ROOT, 'test'));
const unit = all.filter((f) => f.startsWith('test/unit/'));

it('names each unit test after the module it tests, at the same path under test/unit as under src (or emulator)', () => {
  expect(unit.length).toBeGreaterThan(40);
  const orphans = unit.filter((file) => {
    const module = file.replace(/^test\/unit\/(?!emulator\/)/, 'src/').replace(/^test\/unit\//, '').replace(/(\.[a-z-]+)*\.test\.ts$/, '.ts');
    return !existsSync(join(ROOT, module));
  });
  expect(orphans).toEqual([]);
});

it('gives no two test files the same name, but unit tests of modules whose names repeat in src', () => {
  const byName = new Map<string, string[]>();
  for (const file of all) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
  const clashes = [...byName.values()].filter((files) => files.length > 1 && files.some((f) => !f.startsWith('test/unit/')));
  expect(clashes).toEqual([]);
});
