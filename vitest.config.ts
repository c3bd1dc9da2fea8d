import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

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
          exclude: [...configDefaults.exclude, 'test/unit/**/*.{redis,net}.test.ts'],
          setupFiles: ['test/support/in-process-only.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**/!(*.redis|*.net).test.ts'],
        },
      },
    ],
  },
});
