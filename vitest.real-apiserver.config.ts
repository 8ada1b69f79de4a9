import { defineConfig } from 'vitest/config';

// `npm run test:real-apiserver` (scripts/real-apiserver/run-tests.sh): the conformance suite and the
// whole-system tests against a real kube-apiserver named by ROLLGATE_CONFORMANCE_KUBECONFIG. Files run
// one at a time: they share one control plane (each in namespaces of its own).
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts', 'test/real-apiserver/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
