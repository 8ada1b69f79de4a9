// Test support: one conformance cluster per test file, connected before its first test, stopped after its last.
import { afterAll, beforeAll } from 'vitest';
import {
  connectConformanceCluster,
  type ConformanceCluster,
} from '../conformance/support/conformance-cluster.ts';

/**
 * Registers the file's hooks that connect a conformance cluster (a fresh sandbox, or the real cluster named
 * by ROLLGATE_CONFORMANCE_KUBECONFIG, with a fresh namespace) before all tests and stop it after them.
 * Returns that cluster for tests and later hooks; reading it before it is connected throws.
 */
export function useConformanceCluster(): ConformanceCluster {
  let connected: ConformanceCluster | undefined;
  beforeAll(async () => {
    connected = await connectConformanceCluster();
  });
  afterAll(async () => {
    await connected?.stop();
  });
  return new Proxy({} as ConformanceCluster, {
    get(_unused, property) {
      if (connected === undefined)
        throw new Error(
          `conformance cluster .${String(property)} read before the file's beforeAll connected it`,
        );
      return Reflect.get(connected, property) as unknown;
    },
  });
}
