import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites start real servers on 127.0.0.1; give slow shared machines room.
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
