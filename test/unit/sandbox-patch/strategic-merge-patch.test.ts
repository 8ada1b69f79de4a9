// Strategic merge patch: keyed list merges, directives, and 415 for custom resources.

import { describe, expect, it } from 'vitest';
import {
  applyStrategicMergePatch,
  StrategicMergePatchError,
  StrategicMergeUnsupportedError,
  supportsStrategicMerge,
} from '../../../src/sandbox/patch/index.ts';

const deployment = { group: 'apps', version: 'v1', kind: 'Deployment' };
const pod = { group: '', version: 'v1', kind: 'Pod' };
const service = { group: '', version: 'v1', kind: 'Service' };

function aDeployment(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' }, finalizers: ['a'] },
    spec: {
      replicas: 2,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:1',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              ports: [{ containerPort: 8080 }],
              args: ['--x'],
            },
            { name: 'proxy', image: 'proxy:1' },
          ],
          volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }],
          tolerations: [{ key: 'a', operator: 'Exists' }],
        },
      },
    },
  };
}

type Doc = {
  metadata: { finalizers?: string[]; labels?: Record<string, string> };
  spec: {
    strategy: Record<string, unknown>;
    template: {
      spec: { containers: Array<Record<string, unknown>>; volumes: unknown[]; tolerations: unknown[] };
    };
  };
};

function patched(patch: unknown): Doc {
  return applyStrategicMergePatch(aDeployment(), patch, deployment) as Doc;
}

describe('applyStrategicMergePatch', () => {
  it('merges containers by name: changes one container and keeps the other', () => {
    const result = patched({
      spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } },
    });
    expect(
      result.spec.template.spec.containers.map((container) => [container.name, container.image]),
    ).toEqual([
      ['app', 'app:2'],
      ['proxy', 'proxy:1'],
    ]);
    expect(result.spec.template.spec.containers[0]?.env).toHaveLength(2);
  });

  it('appends list items with a new merge key', () => {
    const result = patched({
      spec: { template: { spec: { containers: [{ name: 'debug', image: 'busybox' }] } } },
    });
    expect(result.spec.template.spec.containers.map((container) => container.name)).toEqual([
      'app',
      'proxy',
      'debug',
    ]);
  });

  it('merges env by name and ports by containerPort inside a container', () => {
    const result = patched({
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'app',
                env: [
                  { name: 'B', value: 'two' },
                  { name: 'C', value: '3' },
                ],
                ports: [{ containerPort: 8080, name: 'http' }, { containerPort: 9090 }],
              },
            ],
          },
        },
      },
    });
    const app = result.spec.template.spec.containers[0] ?? {};
    expect(app.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'two' },
      { name: 'C', value: '3' },
    ]);
    expect(app.ports).toEqual([{ containerPort: 8080, name: 'http' }, { containerPort: 9090 }]);
  });

  it('replaces lists without a merge strategy (args, tolerations)', () => {
    const result = patched({
      spec: {
        template: {
          spec: {
            containers: [{ name: 'app', args: ['--y'] }],
            tolerations: [{ key: 'b', operator: 'Exists' }],
          },
        },
      },
    });
    expect(result.spec.template.spec.containers[0]?.args).toEqual(['--y']);
    expect(result.spec.template.spec.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
  });

  it('merges volumes by name and finalizers as a set', () => {
    const result = patched({
      metadata: { finalizers: ['b', 'a'] },
      spec: { template: { spec: { volumes: [{ name: 'data', emptyDir: {} }] } } },
    });
    expect(result.metadata.finalizers).toEqual(['a', 'b']);
    expect(result.spec.template.spec.volumes).toEqual([
      { name: 'cfg', configMap: { name: 'cfg' } },
      { name: 'data', emptyDir: {} },
    ]);
  });

  it('$patch: delete removes a keyed list item', () => {
    const result = patched({
      spec: { template: { spec: { containers: [{ name: 'proxy', $patch: 'delete' }] } } },
    });
    expect(result.spec.template.spec.containers.map((container) => container.name)).toEqual(['app']);
  });

  it('$patch: replace on a list replaces it with the given items', () => {
    const result = patched({
      spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } } },
    });
    expect(result.spec.template.spec.containers).toEqual([{ name: 'only', image: 'x' }]);
  });

  it('$patch: replace on a map replaces the map; $patch: delete removes it', () => {
    expect(patched({ spec: { strategy: { $patch: 'replace', type: 'Recreate' } } }).spec.strategy).toEqual({
      type: 'Recreate',
    });
    expect(patched({ metadata: { labels: { $patch: 'delete' } } }).metadata.labels).toBeUndefined();
  });

  it('$retainKeys clears keys not listed (strategy type switch)', () => {
    const result = patched({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    expect(result.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('$deleteFromPrimitiveList removes values from a set list', () => {
    const result = patched({ metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
    expect(result.metadata.finalizers).toEqual([]);
  });

  it('$setElementOrder reorders a keyed list', () => {
    const result = patched({
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'proxy' }, { name: 'app' }] } } },
    });
    expect(result.spec.template.spec.containers.map((container) => container.name)).toEqual(['proxy', 'app']);
  });

  it('null removes a field, like merge patch', () => {
    const result = patched({ spec: { strategy: { rollingUpdate: null } } });
    expect(result.spec.strategy).toEqual({ type: 'RollingUpdate' });
  });

  it('merges pod status conditions by type', () => {
    const live = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    };
    const result = applyStrategicMergePatch(
      live,
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      pod,
    );
    expect(result).toEqual({
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    });
  });

  it('merges service ports by port', () => {
    const live = { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
    const result = applyStrategicMergePatch(
      live,
      { spec: { ports: [{ port: 80, targetPort: 9090 }] } },
      service,
    );
    expect(result).toEqual({ spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] } });
  });

  it('rejects a keyed list item without its merge key', () => {
    expect(() => patched({ spec: { template: { spec: { containers: [{ image: 'x' }] } } } })).toThrow(
      StrategicMergePatchError,
    );
  });

  it('custom resources are refused as the real API server does (415)', () => {
    const rollout = { group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout' };
    expect(supportsStrategicMerge(rollout)).toBe(false);
    expect(supportsStrategicMerge(deployment)).toBe(true);
    let caught: unknown;
    try {
      applyStrategicMergePatch({}, { spec: {} }, rollout);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StrategicMergeUnsupportedError);
    expect(caught).toMatchObject({ httpStatus: 415, code: 'strategic-merge.unsupported-kind' });
  });

  it('never mutates the target', () => {
    const target = aDeployment();
    applyStrategicMergePatch(target, { spec: { replicas: 9 } }, deployment);
    expect(target).toEqual(aDeployment());
  });
});

describe('applyStrategicMergePatch: result independence', () => {
  it('the result shares nothing with the target', () => {
    const target = aDeployment();
    const result = applyStrategicMergePatch(target, { spec: { replicas: 3 } }, deployment) as Doc;
    result.metadata.labels = { changed: 'yes' };
    (result.spec.template.spec.containers[0] as { image: string }).image = 'mutated';
    expect(target).toEqual(aDeployment());
  });
});
