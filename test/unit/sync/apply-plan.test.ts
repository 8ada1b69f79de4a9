import { describe, expect, it } from 'vitest';
import { planApply, planRemoval, type PlannedObject } from '../../../src/sync/apply-plan.ts';
import { runPlan } from '../../../src/sync/plan-runner.ts';

const NS = 'apps';

function obj(
  kind: string,
  name: string,
  spec: Record<string, unknown> = {},
  namespace?: string,
): PlannedObject {
  const apiVersion =
    kind === 'Rollout' || kind.endsWith('AnalysisTemplate')
      ? 'argoproj.io/v1alpha1'
      : kind === 'Deployment'
        ? 'apps/v1'
        : 'v1';
  return {
    key: `${kind}/${namespace ?? ''}/${name}`,
    apiVersion,
    kind,
    name,
    ...(namespace ? { namespace } : {}),
    object: { apiVersion, kind, metadata: { name }, spec },
  };
}

function rollout(name: string, template: Record<string, unknown>, strategy: Record<string, unknown> = {}) {
  return obj('Rollout', name, { template: { spec: template }, strategy });
}

const manyConfigMaps = (n: number): PlannedObject[] =>
  Array.from({ length: n }, (_, i) => obj('ConfigMap', `unrelated-${String(i).padStart(5, '0')}`));

/** The keys each object waits for. */
function needsByKey(objects: PlannedObject[]): Record<string, string[]> {
  const plan = planApply(objects, { defaultNamespace: NS });
  return Object.fromEntries(
    objects.map((o, i) => [o.key, (plan.needs[i] as number[]).map((j) => (objects[j] as PlannedObject).key)]),
  );
}

describe('planApply', () => {
  it('makes a Rollout wait for the ConfigMaps and Secrets it mounts or reads in env, and its ServiceAccount', () => {
    const objects = [
      rollout('web', {
        serviceAccountName: 'web-sa',
        volumes: [{ name: 'conf', configMap: { name: 'web-config' } }],
        containers: [
          {
            name: 'app',
            image: 'web:2',
            env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'web-token', key: 't' } } }],
          },
        ],
      }),
      obj('ConfigMap', 'web-config'),
      obj('Secret', 'web-token'),
      obj('ServiceAccount', 'web-sa'),
      obj('ConfigMap', 'other'),
    ];
    expect(needsByKey(objects)['Rollout//web']?.sort()).toEqual([
      'ConfigMap//web-config',
      'Secret//web-token',
      'ServiceAccount//web-sa',
    ]);
    expect(needsByKey(objects)['ConfigMap//other']).toEqual([]);
  });

  it('makes a Rollout wait for the Services its strategy names and the AnalysisTemplates it runs', () => {
    const objects = [
      rollout(
        'web',
        { containers: [{ name: 'c', image: 'web:2' }] },
        {
          canary: {
            canaryService: 'web-canary',
            stableService: 'web-stable',
            steps: [{ analysis: { templates: [{ templateName: 'success-rate' }] } }],
          },
        },
      ),
      obj('Service', 'web-canary'),
      obj('Service', 'web-stable'),
      obj('AnalysisTemplate', 'success-rate'),
      obj('Service', 'unrelated'),
    ];
    expect(needsByKey(objects)['Rollout//web']?.sort()).toEqual([
      'AnalysisTemplate//success-rate',
      'Service//web-canary',
      'Service//web-stable',
    ]);
  });

  it('does not match an object of the same name in another namespace', () => {
    const objects = [
      rollout('web', { volumes: [{ name: 'c', configMap: { name: 'conf' } }] }),
      obj('ConfigMap', 'conf', {}, 'elsewhere'),
    ];
    expect(needsByKey(objects)['Rollout//web']).toEqual([]);
  });

  it('treats an object without a namespace and one in the default namespace as the same namespace', () => {
    const objects = [
      rollout('web', { volumes: [{ name: 'c', configMap: { name: 'conf' } }] }),
      obj('ConfigMap', 'conf', {}, NS),
    ];
    expect(needsByKey(objects)['Rollout//web']).toEqual([`ConfigMap/${NS}/conf`]);
  });

  it('puts Namespaces and the CRD serving a kind before the objects that need them', () => {
    const crd: PlannedObject = {
      key: 'CustomResourceDefinition//widgets.example.com',
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'widgets.example.com',
      object: { spec: { group: 'example.com', names: { kind: 'Widget' } } },
    };
    const widget: PlannedObject = {
      key: 'Widget/team/w',
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      namespace: 'team',
      name: 'w',
      object: { spec: {} },
    };
    const objects = [widget, obj('ConfigMap', 'c', {}, 'team'), crd, obj('Namespace', 'team')];
    const needs = needsByKey(objects);
    expect(needs['Widget/team/w']?.sort()).toEqual([crd.key, 'Namespace//team']);
    expect(needs['ConfigMap/team/c']).toEqual(['Namespace//team']);
    expect(needs['Namespace//team']).toEqual([]);
  });

  it('lets a Deployment wait for what it mounts, and a Rollout for the Deployment of its workloadRef', () => {
    const objects = [
      obj('Rollout', 'web', {
        workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-deploy' },
      }),
      obj('Deployment', 'web-deploy', {
        template: { spec: { volumes: [{ name: 'c', configMap: { name: 'web-config' } }] } },
      }),
      obj('ConfigMap', 'web-config'),
    ];
    const needs = needsByKey(objects);
    expect(needs['Rollout//web']).toEqual(['Deployment//web-deploy']);
    expect(needs['Deployment//web-deploy']).toEqual(['ConfigMap//web-config']);
  });

  it('orders every object after all it needs, and a Rollout with what it needs before 5,000 unrelated ConfigMaps', () => {
    const objects = [
      ...manyConfigMaps(5000),
      rollout('web', { volumes: [{ name: 'c', configMap: { name: 'web-config' } }] }),
      obj('ConfigMap', 'web-config'),
      obj('Namespace', NS),
    ];
    const plan = planApply(objects, { defaultNamespace: NS });
    expect([...plan.order].sort((a, b) => a - b)).toEqual(objects.map((_, i) => i));
    const at = new Map(plan.order.map((index, position) => [index, position]));
    plan.needs.forEach((deps, i) => {
      for (const j of deps) expect(at.get(j)).toBeLessThan(at.get(i) as number);
    });
    const keysInOrder = plan.order.map((i) => (objects[i] as PlannedObject).key);
    expect(keysInOrder.slice(0, 3)).toEqual([`Namespace//${NS}`, 'ConfigMap//web-config', 'Rollout//web']);
  });

  it('removes in reverse: a Rollout before the ConfigMap it mounted, a Namespace after what was in it', () => {
    const objects = [
      obj('Namespace', NS),
      obj('ConfigMap', 'web-config'),
      rollout('web', { volumes: [{ name: 'c', configMap: { name: 'web-config' } }] }),
    ];
    const plan = planRemoval(objects, { defaultNamespace: NS });
    expect(plan.needs[1]).toEqual([2]);
    expect([...(plan.needs[0] as number[])].sort()).toEqual([1, 2]);
    expect(plan.order.map((i) => (objects[i] as PlannedObject).name)).toEqual(['web', 'web-config', NS]);
  });
});

/** Runs a plan whose work settles only when the test says so, recording what started. */
function controlledRun(objects: PlannedObject[], concurrency: number) {
  const plan = planApply(objects, { defaultNamespace: NS });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  let running = 0;
  let maxRunning = 0;
  const done = runPlan(plan, concurrency, async (i) => {
    const key = (objects[i] as PlannedObject).key;
    started.push(key);
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    await new Promise<void>((resolve) => finishers.set(key, resolve));
    running -= 1;
  });
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    started,
    done,
    maxRunning: () => maxRunning,
    async finish(key: string) {
      const f = finishers.get(key);
      if (!f) throw new Error(`${key} has not started`);
      finishers.delete(key);
      f();
      await tick();
    },
    async finishAll() {
      while (finishers.size > 0) for (const key of [...finishers.keys()]) await this.finish(key);
    },
    tick,
  };
}

describe('runPlan', () => {
  it('starts a Rollout only after the ConfigMap it mounts has settled', async () => {
    const run = controlledRun(
      [
        rollout('web', { volumes: [{ name: 'c', configMap: { name: 'web-config' } }] }),
        obj('ConfigMap', 'web-config'),
      ],
      8,
    );
    await run.tick();
    expect(run.started).toEqual(['ConfigMap//web-config']);
    await run.finish('ConfigMap//web-config');
    expect(run.started).toEqual(['ConfigMap//web-config', 'Rollout//web']);
    await run.finishAll();
    await run.done;
  });

  it('starts a Rollout that needs nothing at once, not behind 5,000 unrelated ConfigMaps', async () => {
    const run = controlledRun([...manyConfigMaps(5000), rollout('web', { containers: [] })], 4);
    await run.tick();
    expect(run.started).toContain('Rollout//web');
    expect(run.started).toHaveLength(4);
    await run.finishAll();
    expect(run.started).toHaveLength(5001);
    await run.done;
  });

  it('never runs more objects at once than the concurrency bound', async () => {
    const run = controlledRun(manyConfigMaps(50), 3);
    await run.tick();
    expect(run.started).toHaveLength(3);
    await run.finishAll();
    await run.done;
    expect(run.started).toHaveLength(50);
    expect(run.maxRunning()).toBe(3);
  });

  it('starts nothing more after work throws, waits for the running ones, and throws that error', async () => {
    const objects = manyConfigMaps(10);
    const plan = planApply(objects, { defaultNamespace: NS });
    let started = 0;
    const outcome = runPlan(plan, 2, async () => {
      started += 1;
      if (started === 2) throw new Error('boom');
      await new Promise((resolve) => setImmediate(resolve));
    });
    await expect(outcome).rejects.toThrow('boom');
    expect(started).toBe(2);
  });
});
