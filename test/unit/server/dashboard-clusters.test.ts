// Reading every cluster apart: one that fails or does not answer gives its own error, the others their values.
import { describe, expect, it } from 'vitest';
import { fixedClusterSet, type ClusterHandle } from '../../../src/clusters/cluster-set.ts';
import type { KubeConnection } from '../../../src/kube/client.ts';
import { clustersInOrder, readEachCluster } from '../../../src/server/dashboard/dashboard-clusters.ts';

const cluster = (name: string): ClusterHandle => ({
  name,
  origin: 'kubeconfig',
  server: `https://${name}.example`,
  kube: {} as KubeConnection,
});

describe('readEachCluster', () => {
  it('keeps each cluster apart: a failure and a cluster that never answers do not hold the others', async () => {
    const results = await readEachCluster(
      [cluster('a'), cluster('down'), cluster('silent')],
      (c) =>
        c.name === 'a'
          ? Promise.resolve(['web'])
          : c.name === 'down'
            ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'kube.transient' }))
            : new Promise<string[]>(() => undefined),
      50,
    );
    expect(
      results.map((r) => [r.cluster.name, 'value' in r ? r.value : (r.error as { code: string }).code]),
    ).toEqual([
      ['a', ['web']],
      ['down', 'kube.transient'],
      ['silent', 'dashboard.cluster_timeout'],
    ]);
  });

  it('orders the local cluster first, then by name', () => {
    const set = fixedClusterSet(cluster('in-cluster'), [cluster('zeta'), cluster('alpha')]);
    expect(clustersInOrder(set).map((c) => c.name)).toEqual(['in-cluster', 'alpha', 'zeta']);
  });
});
