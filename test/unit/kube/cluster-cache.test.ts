// The informer cache: watch events and relists, the indexes a reconcile reads through, and what it keeps of each object.
import { describe, expect, it } from 'vitest';
import { ClusterCache, type CachedObject } from '../../../src/kube/cluster-cache.ts';
import { matchesLabelSelector } from '../../../src/kube/label-selector.ts';

const HASH = 'rollouts-pod-template-hash';

function replicaSet(name: string, hash: string, owner?: string): CachedObject {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: '7',
      labels: { app: 'web', [HASH]: hash },
      ownerReferences: owner ? [{ uid: owner, controller: true, kind: 'Rollout', name: 'web' }] : [],
      managedFields: [{ manager: 'rollgate', fieldsV1: { big: 'x'.repeat(1000) } }],
    },
    spec: { replicas: 2, template: { metadata: { labels: { app: 'web' } } } },
    status: { replicas: 2, readyReplicas: 2, availableReplicas: 1, conditions: [{ type: 'X' }] },
  };
}

function pod(name: string, hash: string): CachedObject {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'web', [HASH]: hash } },
    spec: { containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: 'b' }] }], volumes: [{}] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'PodScheduled', status: 'True' },
      ],
      containerStatuses: [{ name: 'app', image: 'app:1', restartCount: 0, state: { running: {} } }],
    },
  };
}

describe('ClusterCache', () => {
  it('takes a paged list page by page, trimmed as it comes, and serves the old objects until it is whole', () => {
    const cache = new ClusterCache();
    cache.replace('ReplicaSet', [replicaSet('old', 'h0', 'r1')]);
    const relist = cache.beginReplace('ReplicaSet');
    relist.add([replicaSet('a', 'h1', 'r1')]);
    relist.add([replicaSet('b', 'h2', 'r1')]);
    // Half a relist is not the truth yet: readers still get what the last whole list and events said.
    expect(cache.replicaSetsOf('ns', 'r1').map((rs) => rs.metadata?.name)).toEqual(['old']);
    relist.commit();
    const now = cache.replicaSetsOf('ns', 'r1');
    expect(now.map((rs) => rs.metadata?.name)).toEqual(['a', 'b']);
    expect(now[0]?.metadata?.managedFields).toBeUndefined();

    const fresh = new ClusterCache();
    const list = fresh.beginReplace('Pod');
    list.add([pod('p1', 'h1')]);
    expect(fresh.synced('Pod')).toBe(false);
    list.commit();
    expect(fresh.synced('Pod')).toBe(true);
  });

  it('answers by owner and hash, follows watch events, and a relist replaces everything', () => {
    const cache = new ClusterCache();
    expect(cache.synced('ReplicaSet')).toBe(false);
    cache.replace('ReplicaSet', [
      replicaSet('a', 'h1', 'r1'),
      replicaSet('b', 'h2', 'r2'),
      replicaSet('o', 'h3'),
    ]);
    expect(cache.synced('ReplicaSet')).toBe(true);
    expect(cache.replicaSetsOf('ns', 'r1').map((rs) => rs.metadata?.name)).toEqual(['a', 'o']);
    expect(cache.replicaSetsOf('other', 'r1').map((rs) => rs.metadata?.name)).toEqual(['a']);

    // The orphan is adopted by r2: it moves from the namespace's orphans to r2's.
    cache.apply('ReplicaSet', 'MODIFIED', replicaSet('o', 'h3', 'r2'));
    expect(cache.replicaSetsOf('ns', 'r1').map((rs) => rs.metadata?.name)).toEqual(['a']);
    expect(
      cache
        .replicaSetsOf('ns', 'r2')
        .map((rs) => rs.metadata?.name)
        .sort(),
    ).toEqual(['b', 'o']);
    cache.apply('ReplicaSet', 'DELETED', replicaSet('b', 'h2', 'r2'));
    expect(cache.replicaSetsOf('ns', 'r2').map((rs) => rs.metadata?.name)).toEqual(['o']);
    cache.apply('ReplicaSet', 'BOOKMARK', replicaSet('z', 'h9', 'r2'));
    expect(cache.size('ReplicaSet')).toBe(2);

    // A relist (after 410 Gone) is the whole truth: what it lacks was deleted meanwhile.
    cache.replace('ReplicaSet', [replicaSet('c', 'h4', 'r1')]);
    expect(cache.replicaSetsOf('ns', 'r2')).toEqual([]);
    expect(cache.replicaSetsOf('ns', 'r1').map((rs) => rs.metadata?.name)).toEqual(['c']);

    cache.replace('Pod', [pod('p1', 'h1'), pod('p2', 'h2'), pod('p3', 'h1')]);
    expect(
      cache
        .podsWithHashes('ns', ['h1'])
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['p1', 'p3']);
    expect(cache.podsWithHashes('other', ['h1'])).toEqual([]);
  });

  it('keeps only what the reader looks at: no managedFields, no pod env or volumes', () => {
    const cache = new ClusterCache();
    cache.replace('ReplicaSet', [replicaSet('a', 'h1', 'r1')]);
    cache.replace('Pod', [pod('p1', 'h1')]);
    const [rs] = cache.replicaSetsOf('ns', 'r1');
    expect(rs?.metadata?.managedFields).toBeUndefined();
    expect(rs?.metadata?.resourceVersion).toBe('7');
    expect(rs?.status).toEqual({ replicas: 2, readyReplicas: 2, availableReplicas: 1 });
    const [p] = cache.podsWithHashes('ns', ['h1']);
    expect(p?.spec).toEqual({ containers: [{ name: 'app', image: 'app:1' }] });
    expect(p?.status).toEqual({
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'app', image: 'app:1', restartCount: 0, state: { running: {} } }],
    });
    expect(JSON.stringify(rs).length).toBeLessThan(JSON.stringify(replicaSet('a', 'h1', 'r1')).length / 2);
  });
});

describe('matchesLabelSelector', () => {
  const labels = { app: 'web', tier: 'front' };
  it.each([
    ['matchLabels equal', { matchLabels: { app: 'web' } }, true],
    ['matchLabels differ', { matchLabels: { app: 'api' } }, false],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }, true],
    ['In, absent key', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, false],
    ['NotIn, absent key', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, false],
    ['empty selects everything', {}, true],
  ])('%s', (_name, selector, want) => {
    expect(matchesLabelSelector(selector, labels)).toBe(want);
  });
});
