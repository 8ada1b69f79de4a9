import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer.ts';

const SHARED_EXCLUDE = ['test/slow/**', 'test/real-apiserver/**', 'node_modules/**'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One more fork than cores. Vitest's default (cores - 1) ran the whole suite in one fork on a 2-core
    // machine, while most integration files spend their time waiting on servers, child processes and
    // timers: test/integration/reconcile took 485 s in one fork and 251 s in three, with the same CPU time.
    maxWorkers: availableParallelism() + 1,
    // The second prints the wall time and the slowest files at the end (test/support/slowest-files-reporter.ts).
    reporters: ['default', './test/support/slowest-files-reporter.ts'],
    // The longest files first, also when Vitest remembers no earlier run (test/support/slow-first-sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          // Pure functions and in-memory doubles (no vi.mock, no process-wide state): one fork runs them
          // all without re-importing the planner for each file, which was a third of their time.
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: SHARED_EXCLUDE,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // Whole-system tests start servers, processes and signal handlers: each file in its own fork.
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...SHARED_EXCLUDE, 'test/unit/**'],
        },
      },
    ],
  },
});
