import { defineConfig } from 'vitest/config';

// Long randomized and soak suites: `npm run test:slow`. Not part of the default CI run.
export default defineConfig({
  test: {
    include: ['test/slow/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
