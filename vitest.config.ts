import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { clientNodeBundle } from './test/support/client-node-bundle.ts';
import SlowFirstSequencer from './test/support/slow-first-sequencer.ts';
import { OWN_FORK_FILES } from './test/support/own-fork-files.ts';

/** ROLLGATE_TEST_FORKS as a number of forks, or `otherwise` when unset; anything else stops the run at once. */
function forkCount(value: string | undefined, otherwise: number): number {
  if (value === undefined || value === '') return otherwise;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1) {
    throw new Error(
      `ROLLGATE_TEST_FORKS=${JSON.stringify(value)}: expected a whole number of forks, 1 or more`,
    );
  }
  return count;
}

const SHARED_EXCLUDE = ['test/slow/**', 'test/real-apiserver/**', 'node_modules/**'];

/**
 * The integration files outside OWN_FORK_FILES share forks (isolate off): a fresh fork spends 1.3-2.2 s of
 * CPU importing before a file's first test, more than many of these files spend testing. Sharing used to
 * be opt-in: three files failed in shared forks at load 30-95. They were timing windows too tight for a
 * loaded machine, not state one file left to the next (docs/BENCHMARKS.md). ROLLGATE_TEST_SHARED_FORKS=0
 * gives each file a fork of its own again.
 */
const SHARED_FORKS = process.env['ROLLGATE_TEST_SHARED_FORKS'] !== '0';

/**
 * @kubernetes/client-node bundled into one file for the tests (test/support/client-node-bundle.ts): ~0.8 s of
 * CPU less in each fork. ROLLGATE_TEST_CLIENT_NODE_BUNDLE=0 imports the package as installed.
 */
const CLIENT_NODE_ALIAS =
  process.env['ROLLGATE_TEST_CLIENT_NODE_BUNDLE'] === '0'
    ? []
    : [
        {
          find: /^@kubernetes\/client-node$/,
          replacement: clientNodeBundle(dirname(fileURLToPath(import.meta.url))),
        },
      ];

export default defineConfig({
  test: {
    alias: CLIENT_NODE_ALIAS,
    globalSetup: ['test/support/global-setup.ts'],
    // ROLLGATE_FILE_CPU=FILE: each file's CPU (its fork's and its children's) recorded there and summed up at
    // the end (test/support/file-cpu-recorder.ts); off by default.
    setupFiles: process.env['ROLLGATE_FILE_CPU'] ? ['test/support/file-cpu-recorder.ts'] : [],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Four more forks than cores; ROLLGATE_TEST_FORKS sets another number. Vitest's default (cores - 1) ran
    // the whole suite in one fork on a 2-core machine, while most integration files spend their time waiting
    // on servers, child processes and timers: test/integration/reconcile took 485 s in one fork and 251 s in
    // three, with the same CPU time. Since the integration files share forks (a fork's imports paid once, not
    // per file), more forks cost little: on a 2-core machine four ran the suite in 346 s with the cores idle a
    // quarter of the shared files' time, six in 315 s with them idle a tenth (docs/BENCHMARKS.md, 2026-12-06,
    // "the suite's forks"; beside two busy loops, one a core, six still passed every file). On a slower
    // (paravirtualized) machine, where four already kept the cores busy, two more forks only add their
    // imports (~3.5 s of CPU): six ran the suite there in 614-758 s, four in 683-832 s in earlier sessions
    // (other trees), so the time there is its CPU (docs/BENCHMARKS.md, "2026-12-06, later").
    maxWorkers: forkCount(process.env['ROLLGATE_TEST_FORKS'], availableParallelism() + 4),
    // The second prints the wall time and the slowest files at the end (test/support/slowest-files-reporter.ts).
    reporters: ['default', './test/support/slowest-files-reporter.ts'],
    // The longest files first, also when Vitest remembers no earlier run, and each project's files together
    // so a fork is handed the next file of its own project (test/support/slow-first-sequencer.ts).
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
          // Whole-system tests start servers, processes and signal handlers and stop them in their hooks, so
          // files follow one another in a fork (SHARED_FORKS above), sharing its imported modules.
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...SHARED_EXCLUDE, 'test/unit/**', ...OWN_FORK_FILES],
          isolate: !SHARED_FORKS,
        },
      },
      {
        extends: true,
        test: {
          // The long whole-system files: a fork each, always (test/support/own-fork-files.ts says why).
          name: 'integration-own-fork',
          include: [...OWN_FORK_FILES],
          exclude: SHARED_EXCLUDE,
        },
      },
    ],
  },
});
