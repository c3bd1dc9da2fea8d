// Mutation testing of the modules that guard money and access: `npm run mutate`
// (all groups, hours on two cores), or `MUTATE_GROUP=money npm run mutate` for
// one group (stryker.groups.json lists the groups). Not in CI: too slow.
// Each group keeps its own incremental file, so a re-run tests only what changed.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

/** Per group, the modules mutated and the suites that guard them (vitest.mutate.config.ts reads the same file). */
const MUTATION_GROUPS = JSON.parse(readFileSync(new URL('./stryker.groups.json', import.meta.url), 'utf8'));

const group = process.env.MUTATE_GROUP;
const chosen = group === undefined ? Object.values(MUTATION_GROUPS) : [MUTATION_GROUPS[group]];
const name = group ?? 'all';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  coverageAnalysis: 'perTest',
  // A mutant in module-level code would need every test re-run: left out, and counted as ignored.
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 15000,
  incremental: true,
  incrementalFile: `reports/stryker-incremental-${name}.json`,
  mutate: chosen.flatMap((g) => g.mutate),
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
