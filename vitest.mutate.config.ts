/**
 * The suites mutation testing runs (stryker.config.mjs, `npm run mutate`):
 * per group of mutated modules, the suites that guard them. A mutant re-runs
 * the test files that reach it, and a file that starts the whole gateway
 * costs seconds to import, so each group lists its direct suites and only
 * the integration suites that check what no direct one can.
 * MUTATE_GROUP picks one group; without it, all of them.
 */
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** The groups, shared with stryker.config.mjs: per group, the modules mutated and the suites that guard them. */
const MUTATION_GROUPS = JSON.parse(readFileSync(new URL('./stryker.groups.json', import.meta.url), 'utf8')) as Record<string, { mutate: string[]; tests: string[] }>;

const group = process.env.MUTATE_GROUP;
if (group !== undefined && !(group in MUTATION_GROUPS)) throw new Error(`MUTATE_GROUP must be one of ${Object.keys(MUTATION_GROUPS).join(', ')}`);
const chosen = group === undefined ? Object.values(MUTATION_GROUPS) : [MUTATION_GROUPS[group]!];

// Spread, not mergeConfig: that would append this list to the base's `test/**` and run everything.
// One flat list, not the base's projects, whose includes would override it.
const { projects: _projects, reporters: _reporters, ...baseTest } = base.test ?? {};
export default defineConfig({
  ...base,
  test: {
    ...baseTest,
    include: [...new Set(chosen.flatMap((g) => g.tests))],
  },
});
