import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM builds; @apollo/subgraph and Apollo Server load
    // the CJS one, so tests must too, or graphql-js sees two "realms" of its types.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Says after the summary which suites a missing redis-server or Chromium skipped.
    globalSetup: ['test/support/global-setup.ts'],
    // Integration suites start real servers on 127.0.0.1; give slow shared machines room.
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
