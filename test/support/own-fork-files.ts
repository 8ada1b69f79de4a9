// Integration files that keep a fork of their own (vitest project `integration-own-fork`) while the other
// integration files share forks (the default; ROLLGATE_TEST_SHARED_FORKS=0 gives every file its own,
// vitest.config.ts). They start first.
//
// These are the long whole-system files: Rollgate as child processes (process/, demo/) and the files of the
// known-slow list (a minute or more each). Sharing saves a file the ~1.7 s of CPU a fresh fork spends
// importing (docs/BENCHMARKS.md), little beside their minutes; and one that fails by a timeout can leave
// pollers, syncs and child processes running, which in a shared fork ran on into the next files and failed
// them too (seen at load 35–95: a file that passed alone timed out after one of these). Its own fork ends
// with it.
import { KNOWN_SLOW_FILES } from './slow-first-sequencer.ts';

export const OWN_FORK_FILES: readonly string[] = [
  'test/integration/process/**',
  'test/integration/demo/**',
  ...KNOWN_SLOW_FILES,
  // It measures the process's buffers (`process.memoryUsage().arrayBuffers`) before and after holding webhook
  // bodies: in a shared fork, what an earlier file left behind and freed meanwhile came off the growth (it
  // timed out waiting for 10 MB it held, once, in a clone of the suite).
  'test/integration/server/webhook-abuse.test.ts',
];
