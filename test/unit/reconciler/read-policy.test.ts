// Read policy: resourceVersions compared as numbers, handovers checked, waits ended by cache events and bounded.
import { describe, expect, it } from 'vitest';
import { ClusterCache } from '../../../src/kube/cluster-cache.ts';
import {
  ReadPolicy,
  compareResourceVersions,
  parseWrittenVersions,
  type WrittenVersionsStore,
} from '../../../src/reconciler/read-policy.ts';

const key = { namespace: 'default', name: 'web' };
const rs = (name: string, resourceVersion: string) => ({
  metadata: {
    name,
    namespace: 'default',
    resourceVersion,
    ownerReferences: [{ uid: 'u1', controller: true }],
  },
});

function syncedCache(): ClusterCache {
  const cache = new ClusterCache();
  for (const kind of ['Rollout', 'ReplicaSet', 'Pod', 'AnalysisRun', 'Service'] as const)
    cache.replace(kind, []);
  return cache;
}

describe('compareResourceVersions', () => {
  it.each([
    { a: '10', b: '9', want: 1 },
    { a: '9', b: '10', want: -1 },
    { a: '123456789012345678901', b: '123456789012345678901', want: 0 },
    { a: 'abc', b: '1', want: undefined },
    { a: '', b: '1', want: undefined },
    { a: '-1', b: '1', want: undefined },
  ])('$a vs $b', ({ a, b, want }) => {
    expect(compareResourceVersions(a, b)).toBe(want);
  });
});

describe('parseWrittenVersions', () => {
  it('keeps well-formed entries of the rollout’s namespace and drops the rest', () => {
    const text = JSON.stringify([
      { kind: 'ReplicaSet', namespace: 'default', name: 'web-1', resourceVersion: '12' },
      { kind: 'Pod', namespace: 'default', name: 'p', deleted: true },
      { kind: 'Secret', namespace: 'default', name: 's', resourceVersion: '1' },
      { kind: 'ReplicaSet', namespace: 'other', name: 'x', resourceVersion: '1' },
      { kind: 'ReplicaSet', namespace: 'default', name: 'y' },
      null,
      'text',
    ]);
    expect(parseWrittenVersions(text, key)).toEqual([
      { kind: 'ReplicaSet', namespace: 'default', name: 'web-1', resourceVersion: '12' },
      { kind: 'Pod', namespace: 'default', name: 'p', deleted: true },
    ]);
  });

  it.each([undefined, '', '{', '{"a":1}', '42', 'null'])('%j is no expectation', (text) => {
    expect(parseWrittenVersions(text, key)).toEqual([]);
  });
});

describe('ReadPolicy', () => {
  it('reads the cache at once when it holds the write, and waits for the watch event when not', async () => {
    const cache = syncedCache();
    const policy = new ReadPolicy({ key, cache, waitMs: 5_000 });
    policy.wrote([{ kind: 'ReplicaSet', namespace: 'default', name: 'web-1', resourceVersion: '12' }]);
    const started = performance.now();
    setTimeout(() => cache.apply('ReplicaSet', 'ADDED', rs('web-1', '12')), 20);
    const reads = await policy.beginPass();
    expect(reads.from('ReplicaSet')).toBe(cache);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('gives up after waitMs and reads that kind from the API, the others from the cache', async () => {
    const cache = syncedCache();
    cache.apply('ReplicaSet', 'ADDED', rs('web-1', '11'));
    const policy = new ReadPolicy({ key, cache, waitMs: 30 });
    policy.wrote([{ kind: 'ReplicaSet', namespace: 'default', name: 'web-1', resourceVersion: '12' }]);
    const reads = await policy.beginPass();
    expect(reads.from('ReplicaSet')).toBeUndefined();
    expect(reads.from('Pod')).toBe(cache);
  });

  it('reads the API for a kind whose versions are not numbers, and after a conflict', async () => {
    const cache = syncedCache();
    cache.apply('ReplicaSet', 'ADDED', rs('web-1', 'opaque-2'));
    const policy = new ReadPolicy({ key, cache, waitMs: 5_000 });
    policy.wrote([{ kind: 'ReplicaSet', namespace: 'default', name: 'web-1', resourceVersion: 'opaque-1' }]);
    expect((await policy.beginPass()).from('ReplicaSet')).toBeUndefined();
    policy.readApiNext();
    expect((await policy.beginPass()).from('Pod')).toBeUndefined();
    expect((await policy.beginPass()).from('Pod')).toBe(cache);
  });

  it('hands the job’s writes over to the next job, which waits for them', async () => {
    const saved = new Map<string, string>();
    const shared: WrittenVersionsStore = {
      load: async () => saved.get('web'),
      save: async (_key, value) => void saved.set('web', value),
    };
    const first = await ReadPolicy.forJob({ key, cache: syncedCache(), shared });
    first.wrote([{ kind: 'Rollout', namespace: 'default', name: 'web', resourceVersion: '40' }]);
    await first.publish();

    const trailing = syncedCache();
    trailing.apply('Rollout', 'ADDED', {
      metadata: { name: 'web', namespace: 'default', resourceVersion: '39' },
    });
    const next = await ReadPolicy.forJob({ key, cache: trailing, shared, waitMs: 30 });
    expect((await next.beginPass()).from('Rollout')).toBeUndefined();
  });
});
