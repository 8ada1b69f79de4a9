// Conformance: list with label selectors (equality and set-based), field selectors and pagination.
import { beforeAll, describe, expect, it } from 'vitest';
import { failure } from './support/conformance-cluster.ts';
import { useConformanceCluster } from '../support/use-conformance-cluster.ts';

const cluster = useConformanceCluster();
beforeAll(async () => {
  const objects: Array<[string, Record<string, string>]> = [
    ['sel-a', { app: 'web', tier: 'front' }],
    ['sel-b', { app: 'web', tier: 'back' }],
    ['sel-c', { app: 'db' }],
    ['sel-d', {}],
  ];
  for (const [name, labels] of objects) {
    await cluster.core.createNamespacedConfigMap({
      namespace: cluster.namespace,
      body: { metadata: { name, labels } },
    });
  }
});

async function names(labelSelector?: string, fieldSelector?: string): Promise<string[]> {
  const list = await cluster.core.listNamespacedConfigMap({
    namespace: cluster.namespace,
    ...(labelSelector ? { labelSelector } : {}),
    ...(fieldSelector ? { fieldSelector } : {}),
  });
  return list.items
    .map((i) => i.metadata?.name ?? '')
    .filter((n) => n.startsWith('sel-'))
    .sort();
}

describe('label selectors', () => {
  it.each([
    ['app=web', ['sel-a', 'sel-b']],
    ['app==web,tier=front', ['sel-a']],
    ['app!=web', ['sel-c', 'sel-d']],
    ['tier in (front,back)', ['sel-a', 'sel-b']],
    ['app notin (web)', ['sel-c', 'sel-d']],
    ['tier', ['sel-a', 'sel-b']],
    ['!tier', ['sel-c', 'sel-d']],
    ['app in (web,db),!tier', ['sel-c']],
  ])('%s', async (selector, expected) => {
    expect(await names(selector)).toEqual(expected);
  });

  it('rejects a malformed selector with 400', async () => {
    const { code } = await failure(
      cluster.core.listNamespacedConfigMap({ namespace: cluster.namespace, labelSelector: 'app in web' }),
    );
    expect(code).toBe(400);
  });
});

describe('field selectors', () => {
  it('selects by metadata.name', async () => {
    expect(await names(undefined, 'metadata.name=sel-b')).toEqual(['sel-b']);
    expect(await names(undefined, 'metadata.name!=sel-b')).toEqual(['sel-a', 'sel-c', 'sel-d']);
  });

  it('selects by metadata.namespace across namespaces', async () => {
    const list = await cluster.core.listConfigMapForAllNamespaces({
      fieldSelector: `metadata.namespace=${cluster.namespace}`,
      labelSelector: 'app=db',
    });
    expect(list.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`)).toEqual([
      `${cluster.namespace}/sel-c`,
    ]);
  });
});

describe('pagination', () => {
  it('pages with limit and continue without losing or repeating items', async () => {
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let token: string | undefined;
    do {
      const page = await cluster.core.listNamespacedConfigMap({
        namespace: cluster.namespace,
        limit: 2,
        ...(token ? { _continue: token } : {}),
      });
      pageSizes.push(page.items.length);
      seen.push(...page.items.map((i) => i.metadata?.name ?? ''));
      token = page.metadata?._continue || undefined;
    } while (token);
    // Four objects (five on a cluster that adds kube-root-ca.crt) in pages of at most two.
    expect(pageSizes.length).toBeGreaterThanOrEqual(2);
    for (const size of pageSizes) expect(size).toBeLessThanOrEqual(2);
    const mine = seen.filter((n) => n.startsWith('sel-'));
    expect(mine.sort()).toEqual(['sel-a', 'sel-b', 'sel-c', 'sel-d']);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('an object deleted or created between two pages makes no later page skip or repeat another', async () => {
    // An informer lists in pages while the cluster changes: every object that exists throughout must be
    // in exactly one page, or the cache misses it until it next changes.
    const created = ['page-a', 'page-b', 'page-c', 'page-d', 'page-e', 'page-f'];
    for (const name of created)
      await cluster.core.createNamespacedConfigMap({
        namespace: cluster.namespace,
        body: { metadata: { name, labels: { paging: 'yes' } } },
      });
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await cluster.core.listNamespacedConfigMap({
        namespace: cluster.namespace,
        labelSelector: 'paging=yes',
        limit: 2,
        ...(token ? { _continue: token } : {}),
      });
      seen.push(...page.items.map((i) => i.metadata?.name ?? ''));
      token = page.metadata?._continue || undefined;
      if (++pages === 1) {
        // Both already served: an offset-based token would now skip page-c (and page-d).
        await cluster.core.deleteNamespacedConfigMap({ namespace: cluster.namespace, name: 'page-a' });
        await cluster.core.deleteNamespacedConfigMap({ namespace: cluster.namespace, name: 'page-b' });
        await cluster.core.createNamespacedConfigMap({
          namespace: cluster.namespace,
          body: { metadata: { name: 'page-0', labels: { paging: 'yes' } } },
        });
      }
    } while (token);
    expect(seen.slice(0, 2)).toEqual(['page-a', 'page-b']);
    expect(seen.filter((n) => n !== 'page-0')).toEqual(created);
  });
});
