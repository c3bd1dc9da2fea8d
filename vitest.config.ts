import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Unit files that replace a module (`vi.mock`) need a module graph of their own; the
 * rest share one per worker, which saves re-importing the gateway for every file.
 */
const MOCKING = testFiles('test/unit').filter((file) => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(file, 'utf8')));

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM builds; @apollo/subgraph and Apollo Server load
    // the CJS one, so tests must too, or graphql-js sees two "realms" of its types.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Says after the summary which suites a missing redis-server or Chromium skipped.
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/slowest-files.ts'],
    slowTestThreshold: 2_000,
    // Integration suites start real servers on 127.0.0.1; give slow shared machines room.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // In-process only (no servers, processes, Redis or browser): the one-minute loop, `npm run test:unit`.
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**/*.{redis,net}.test.ts', ...MOCKING],
          setupFiles: ['test/support/in-process-only.ts'],
          pool: 'threads',
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-mocks',
          include: MOCKING,
          setupFiles: ['test/support/in-process-only.ts'],
          pool: 'threads',
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**/!(*.redis|*.net).test.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
