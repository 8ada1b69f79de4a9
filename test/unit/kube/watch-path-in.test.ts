// The watch paths a namespaced install uses: the same collection, inside one namespace.
import { describe, expect, it } from 'vitest';
import { watchPathIn } from '../../../src/kube/watch-with-restart.ts';

describe('watchPathIn', () => {
  it.each([
    ['/apis/rollgate.dev/v1alpha1/rollouts', '', '/apis/rollgate.dev/v1alpha1/rollouts'],
    [
      '/apis/rollgate.dev/v1alpha1/rollouts',
      'team-a',
      '/apis/rollgate.dev/v1alpha1/namespaces/team-a/rollouts',
    ],
    ['/apis/apps/v1/replicasets', 'apps', '/apis/apps/v1/namespaces/apps/replicasets'],
    ['/api/v1/pods', 'default', '/api/v1/namespaces/default/pods'],
  ])('%s in %j is %s', (path, namespace, want) => {
    expect(watchPathIn(path, namespace)).toBe(want);
  });
});
