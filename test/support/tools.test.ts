/**
 * `npm test` must stay green on a machine without redis-server or Chromium:
 * every suite that starts one must go through describeWith (test/support/tools.ts),
 * which skips it there (loudly) and fails it under CI.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : [],
  );
}

it('every suite that needs redis-server or Chromium is declared with describeWith', () => {
  const self = new URL(import.meta.url).pathname;
  const needing = testFiles(join(ROOT, 'test')).filter((file) => file !== self && /startRedisServer|launchChromium/.test(readFileSync(file, 'utf8')));
  expect(needing.length).toBeGreaterThan(3);
  const undeclared = needing.filter((file) => !/describeWith\(/.test(readFileSync(file, 'utf8'))).map((file) => relative(ROOT, file));
  expect(undeclared).toEqual([]);
});
